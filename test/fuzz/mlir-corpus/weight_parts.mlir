module {
  func.func @main(%x: tensor<2x4xf32> {graph.name = "x"}) -> (tensor<2x4xf32> {graph.name = "y"}) {
    %w = graph.weight "w" {file = "w.bin", offset = 0, part_offsets = array<i64: 0, 16>, size = 32} : tensor<2x4xf32>
    %y = graph.add %x, %w : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    return %y : tensor<2x4xf32>
  }
}
