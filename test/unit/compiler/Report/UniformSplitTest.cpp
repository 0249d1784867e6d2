//===- UniformSplitTest.cpp - Megatron-LM's even layer split --------------===//
#include "compiler/Report/UniformSplit.h"

#include <gtest/gtest.h>

using shardc::report::OpCost;
using shardc::report::uniformFirstLayer;
using shardc::report::uniformStageSeconds;

TEST(UniformSplit, LayersSpreadEvenlyWithTheEmbeddingFirstAndTheHeadLast) {
  // embedding, 4 layers of one op each (1, 2, 3, 4 s), an op between layers
  // 1 and 2 outside any layer, the head.
  std::vector<OpCost> ops = {{10, std::nullopt}, {1, 0u},  {2, 1u},         {0.5, std::nullopt},
                             {3, 2u},            {4, 3u},  {20, std::nullopt}};
  std::vector<double> seconds = uniformStageSeconds(ops, 4, 2);
  ASSERT_EQ(seconds.size(), 2u);
  EXPECT_DOUBLE_EQ(seconds[0], 10 + 1 + 2 + 0.5); // the stray op goes with layer 1
  EXPECT_DOUBLE_EQ(seconds[1], 3 + 4 + 20);
}

TEST(UniformSplit, FewerLayersThanStagesStillPutTheHeadLast) {
  std::vector<OpCost> ops = {{1, std::nullopt}, {2, 0u}, {3, 1u}, {4, std::nullopt}};
  // Stage k holds layers [k*2/4, (k+1)*2/4): layer 0 on stage 1, layer 1 on 3.
  std::vector<double> seconds = uniformStageSeconds(ops, 2, 4);
  EXPECT_EQ(seconds, (std::vector<double>{1, 2, 0, 3 + 4}));
}

TEST(UniformSplit, FirstLayersCoverEveryLayerOnce) {
  EXPECT_EQ(uniformFirstLayer(0, 96, 16), 0u);
  EXPECT_EQ(uniformFirstLayer(1, 96, 16), 6u);
  EXPECT_EQ(uniformFirstLayer(16, 96, 16), 96u);
  size_t held = 0;
  for (size_t stage = 0; stage < 5; ++stage)
    held += uniformFirstLayer(stage + 1, 12, 5) - uniformFirstLayer(stage, 12, 5);
  EXPECT_EQ(held, 12u);
}
