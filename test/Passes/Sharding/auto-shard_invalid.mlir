// RUN: shardc-opt %s --split-input-file --shardc-auto-shard="device-memory=16777216" --verify-diagnostics

// tp must split every linear layer's weight; 6 columns and 10 rows do not
// divide by 4.
module {
  dist.mesh @mesh = <["tp"=4]>
  func.func @indivisible(%x: tensor<2x10xf32>) -> tensor<2x6xf32> {
    %w = graph.weight "w" {file = "m.onnx", offset = 0 : i64, size = 240 : i64} : tensor<10x6xf32>
    // expected-error @+1 {{cannot split the weight 'w' [10, 6] over tp=4: no dim it shares with the op is divisible by 4}}
    %0 = graph.linear %x, %w : (tensor<2x10xf32>, tensor<10x6xf32>) -> tensor<2x6xf32>
    return %0 : tensor<2x6xf32>
  }
}

// -----

// The plan must fit the device (16 MiB here): 64 MiB of weights split two
// ways do not.
module {
  dist.mesh @mesh = <["tp"=2]>
  // expected-error @+1 {{the plan needs 32.01 MiB per device (weights 32.00 MiB, activations 8.00 KiB) but the device memory is 16.00 MiB: over by 16.01 MiB}}
  func.func @too_big(%x: tensor<1x4096xf32>) -> tensor<1x4096xf32> {
    %w = graph.weight "w" {file = "m.onnx", offset = 0 : i64, size = 67108864 : i64} : tensor<4096x4096xf32>
    %0 = graph.linear %x, %w : (tensor<1x4096xf32>, tensor<4096x4096xf32>) -> tensor<1x4096xf32>
    return %0 : tensor<1x4096xf32>
  }
}

// -----

// Composites are inlined first (the shardc-shard pipeline does it).
module {
  dist.mesh @mesh = <["tp"=2]>
  func.func @composite(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    // expected-error @+1 {{must be inlined before sharding (run shardc-inline-composites)}}
    %0 = graph.composite "mlp"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
    ^bb0(%a: tensor<2x8xf32>):
      %1 = graph.relu %a : tensor<2x8xf32>
      graph.yield %1 : tensor<2x8xf32>
    }
    return %0 : tensor<2x8xf32>
  }
}
