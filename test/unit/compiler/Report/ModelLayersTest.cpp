//===- ModelLayersTest.cpp - the model's layers from module paths ---------===//
#include "compiler/Report/ModelLayers.h"

#include <gtest/gtest.h>

using shardc::report::ModelLayers;

TEST(ModelLayers, NumberedChildrenOfOneModuleAreTheLayers) {
  ModelLayers layers = ModelLayers::fromModules(
      {"model.embed_tokens", "model.layers.0.self_attn.q_proj", "model.layers.0.mlp",
       "model.layers.1.self_attn", "model.layers.1.mlp.down_proj", "model.norm", "lm_head", ""});
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers.name(0), "model.layers.0");
  EXPECT_EQ(layers.name(1), "model.layers.1");
  EXPECT_EQ(layers.layerOf("model.layers.1.mlp.down_proj"), 1u);
  EXPECT_EQ(layers.layerOf("model.layers.0"), 0u);
  EXPECT_EQ(layers.layerOf("model.norm"), std::nullopt);
  EXPECT_EQ(layers.layerOf("lm_head"), std::nullopt);
  EXPECT_EQ(layers.layerOf(""), std::nullopt);
}

TEST(ModelLayers, TheLongestListWinsAndNestedNumbersBelongToTheirLayer) {
  // T5: encoder.block.N holds layer.0 (attention) and layer.1 (MLP); the
  // blocks are the layers, numbered children further down are not.
  ModelLayers layers = ModelLayers::fromModules(
      {"encoder.block.0.layer.0.SelfAttention", "encoder.block.0.layer.1.DenseReluDense",
       "encoder.block.1.layer.0", "encoder.block.2.layer.1", "heads.0", "heads.0"});
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers.name(2), "encoder.block.2");
  EXPECT_EQ(layers.layerOf("encoder.block.1.layer.0.SelfAttention"), 1u);
  EXPECT_EQ(layers.layerOf("heads.0"), std::nullopt);
}

TEST(ModelLayers, IndicesAreOrderedNumerically) {
  ModelLayers layers =
      ModelLayers::fromModules({"h.10.attn", "h.2.attn", "h.1.mlp", "h.10.mlp"});
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers.name(0), "h.1");
  EXPECT_EQ(layers.name(1), "h.2");
  EXPECT_EQ(layers.name(2), "h.10");
  EXPECT_EQ(layers.layerOf("h.10"), 2u);
  EXPECT_EQ(layers.layerOf("h.3.attn"), std::nullopt);
}

TEST(ModelLayers, NoNumberedModulesNoLayers) {
  ModelLayers layers = ModelLayers::fromModules({"", "encoder", "0.attn"});
  EXPECT_TRUE(layers.empty());
  EXPECT_EQ(layers.layerOf("encoder"), std::nullopt);
}
