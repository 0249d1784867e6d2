//===- CollectiveGroups.h - the sub-groups collective steps use -*- C++ -*-===//
//
// A collective step names the mesh axes it runs over; its group is split
// from the world communicator (Communicator::split, itself a collective over
// the whole world). Every rank must therefore split the same groups in the
// same order. Two ways to make sure of it:
//  - on demand, in the order a program first names each axis list: right
//    when every rank prepares the same program (the SPMD case);
//  - all at once (splitAll): every ordered list of distinct axes but the
//    excluded ones, in one fixed order. A pipeline's ranks run different
//    stage programs, which name axes in different orders or not at all, so
//    they split everything up front and their executors share the groups.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_COLLECTIVEGROUPS_H
#define SHARDC_RUNTIME_CORE_COLLECTIVEGROUPS_H

#include "runtime/core/Communicator.h"
#include "runtime/core/Mesh.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace shardc::rt {

class CollectiveGroups {
public:
  /// Groups of `world` (this rank's communicator over every rank of `mesh`),
  /// which must outlive them.
  CollectiveGroups(MeshShape mesh, Communicator &world) : mesh_(std::move(mesh)), world_(world) {}

  /// Splits every ordered list of distinct axes of the mesh other than
  /// `excluded`; later requests then only look groups up, and a list not
  /// made here is an error.
  Status splitAll(const std::string &excluded);

  /// The group over `axes` (split now unless splitAll ran).
  StatusOr<Communicator *> group(const std::vector<std::string> &axes);

  /// Issues the work the groups hold back (Communicator::flush).
  Status flush();

private:
  StatusOr<Communicator *> split(const std::vector<std::string> &axes);

  MeshShape mesh_;
  Communicator &world_;
  bool fixed_ = false;
  std::vector<std::pair<std::vector<std::string>, std::unique_ptr<Communicator>>> groups_;
};

} // namespace shardc::rt

#endif
