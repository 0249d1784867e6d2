//===- MeshTest.cpp - the rank layout and the groups of a mesh ------------===//
#include "runtime/core/Mesh.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace shardc::rt {
namespace {

TEST(MeshTest, LastAxisVariesFastest) {
  MeshShape mesh({"dp", "tp"}, {2, 2});
  EXPECT_EQ(mesh.devices(), 4);
  EXPECT_EQ(mesh.coordinates(0), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(mesh.coordinates(1), (std::vector<int64_t>{0, 1})); // tp peers are adjacent
  EXPECT_EQ(mesh.coordinates(2), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(mesh.coordinates(3), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(mesh.rankOf({1, 0}), 2);
  EXPECT_EQ(mesh.describe(), "dp=2, tp=2");
}

TEST(MeshTest, CoordinatesAndRanksAreInverses) {
  MeshShape mesh({"dp", "pp", "tp"}, {2, 3, 4});
  EXPECT_EQ(mesh.devices(), 24);
  EXPECT_EQ(mesh.coordinates(23), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(mesh.coordinates(5), (std::vector<int64_t>{0, 1, 1}));
  for (int64_t rank = 0; rank < mesh.devices(); ++rank)
    EXPECT_EQ(mesh.rankOf(mesh.coordinates(rank)), rank);
}

TEST(MeshTest, NoAxesIsOneDevice) {
  MeshShape mesh;
  EXPECT_EQ(mesh.devices(), 1);
  EXPECT_TRUE(mesh.coordinates(0).empty());
  EXPECT_EQ(mesh.rankOf({}), 0);
  EXPECT_TRUE(mesh.verify().ok());
  auto group = mesh.groupColorAndKey(0, {});
  ASSERT_TRUE(group.ok());
  EXPECT_EQ(*group, std::make_pair(0, 0));
}

/// The groups `axes` make: members (world ranks) by color, in key order.
std::map<int, std::vector<int>> groupsOf(const MeshShape &mesh,
                                         const std::vector<std::string> &axes) {
  std::map<int, std::map<int, int>> byColor;
  for (int rank = 0; rank < mesh.devices(); ++rank) {
    auto colorAndKey = mesh.groupColorAndKey(rank, axes);
    EXPECT_TRUE(colorAndKey.ok()) << colorAndKey.status().message();
    auto [color, key] = *colorAndKey;
    EXPECT_EQ(byColor[color].count(key), 0u) << "two ranks with key " << key;
    byColor[color][key] = rank;
  }
  std::map<int, std::vector<int>> groups;
  for (const auto &[color, members] : byColor)
    for (const auto &[key, rank] : members)
      groups[color].push_back(rank);
  return groups;
}

std::set<std::vector<int>> membersOf(const std::map<int, std::vector<int>> &groups) {
  std::set<std::vector<int>> members;
  for (const auto &[color, ranks] : groups)
    members.insert(ranks);
  return members;
}

TEST(MeshTest, GroupsAlongOneAxis) {
  MeshShape mesh({"dp", "tp"}, {2, 2});
  EXPECT_EQ(membersOf(groupsOf(mesh, {"tp"})), (std::set<std::vector<int>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(membersOf(groupsOf(mesh, {"dp"})), (std::set<std::vector<int>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(membersOf(groupsOf(mesh, {"dp", "tp"})), (std::set<std::vector<int>>{{0, 1, 2, 3}}));
  // Keys follow the axes in the order given: tp major, then dp.
  EXPECT_EQ(membersOf(groupsOf(mesh, {"tp", "dp"})), (std::set<std::vector<int>>{{0, 2, 1, 3}}));
  EXPECT_EQ(membersOf(groupsOf(mesh, {})), (std::set<std::vector<int>>{{0}, {1}, {2}, {3}}));
}

TEST(MeshTest, GroupsOfAThreeAxisMesh) {
  MeshShape mesh({"dp", "pp", "tp"}, {2, 3, 2});
  auto pp = membersOf(groupsOf(mesh, {"pp"}));
  EXPECT_EQ(pp.size(), 4u);
  EXPECT_TRUE(pp.count({0, 2, 4}));  // dp 0, tp 0: pp stages 0, 1, 2
  EXPECT_TRUE(pp.count({7, 9, 11})); // dp 1, tp 1
  auto dpTp = membersOf(groupsOf(mesh, {"dp", "tp"}));
  EXPECT_EQ(dpTp.size(), 3u);
  EXPECT_TRUE(dpTp.count({2, 3, 8, 9})); // pp 1
}

TEST(MeshTest, RejectsUnknownAndRepeatedAxes) {
  MeshShape mesh({"dp", "tp"}, {2, 2});
  auto unknown = mesh.groupColorAndKey(0, {"pp"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "mesh axis 'pp' is not in the mesh (dp=2, tp=2)");
  auto twice = mesh.groupColorAndKey(0, {"tp", "tp"});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(), "mesh axis 'tp' is named twice");
}

TEST(MeshTest, VerifyNamesTheProblem) {
  EXPECT_EQ(MeshShape({"dp", "dp"}, {2, 2}).verify().message(), "mesh axis 'dp' appears twice");
  EXPECT_EQ(MeshShape({"tp"}, {0}).verify().message(), "mesh axis 'tp' has size 0; expected >= 1");
  EXPECT_EQ(MeshShape({""}, {2}).verify().message(), "mesh axis 0 has no name");
  EXPECT_TRUE(MeshShape({"dp", "tp"}, {1, 8}).verify().ok());
}

} // namespace
} // namespace shardc::rt
