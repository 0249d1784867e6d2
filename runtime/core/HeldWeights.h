//===- HeldWeights.h - the weights an executor keeps in memory -*- C++ -*-===//
//
// On a device whose kernels read host memory (the CPU), the steps read the
// weights where the load put them, in the rank's weight file copy
// (io::SafeTensorsFile). A step may copy a weight instead (the CPU linear
// packs its weight for oneDNN, KernelState::copiesInput); a weight that
// every step reading it copied, and no output returns, serves nobody once
// copied, and the executor does not keep it: its stored bytes leave memory
// as soon as the last step reading it is prepared (SafeTensorsFile::hold),
// so that the process does not hold it twice, and the peak stays near one
// copy of the weights (each weight is packed, then let go, in program
// order). Every other weight the executor keeps for as long as it lives.
// Either may have to be read back from the file (a prepare after a failed
// run; a repack for another thread count), checked against what the load
// read: a file changed since is an error naming it, never other weights.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_HELDWEIGHTS_H
#define SHARDC_RUNTIME_CORE_HELDWEIGHTS_H

#include "runtime/core/Kernel.h"
#include "runtime/io/SafeTensors.h"

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace shardc::rt {

class HeldWeights {
public:
  explicit HeldWeights(std::shared_ptr<const io::SafeTensorsFile> file);

  /// Keeps the weight `name` in memory while this object lives: a step or
  /// an output reads it in place. Once per name; the first call may read
  /// it back from the file, and fails if that fails.
  Status keep(const std::string &name);

  /// What holds `name` for a step that copies it (PrepareInput::hold). It
  /// keeps the file alive. Until preparedStep() says the weight's last
  /// reader is prepared, the first hold taken lasts, so that readers after
  /// the first do not read it back again.
  HoldWeight holder(const std::string &name) const;

  /// The last step that reads `name` is prepared: its stored bytes may go.
  void lastReaderPrepared(const std::string &name);

private:
  /// The holds taken while the program is prepared, shared with the
  /// holders handed out, which may outlive this object.
  struct Preparing {
    std::mutex lock;
    std::map<std::string, WeightHold> holds;
    /// The weights whose last reader is prepared: each hold is the
    /// holder's own from then on.
    std::set<std::string> prepared;
  };

  std::shared_ptr<const io::SafeTensorsFile> file_;
  std::shared_ptr<Preparing> preparing_;
  std::map<std::string, WeightHold> kept_;
};

} // namespace shardc::rt

#endif // SHARDC_RUNTIME_CORE_HELDWEIGHTS_H
