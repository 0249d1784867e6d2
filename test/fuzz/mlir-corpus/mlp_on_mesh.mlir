module {
  dist.mesh @mesh = <["tp"=2]>
  func.func @main(%x: tensor<4x16xf32> {graph.name = "x"}) -> (tensor<4x16xf32> {graph.name = "y"}) {
    %w1 = graph.weight "w1" {file = "m.onnx", offset = 0, size = 4096} : tensor<64x16xf32>
    %w2 = graph.weight "w2" {file = "m.onnx", offset = 4096, size = 4096} : tensor<16x64xf32>
    %h = graph.linear %x, %w1 {transpose_weight = true} : (tensor<4x16xf32>, tensor<64x16xf32>) -> tensor<4x64xf32>
    %g = graph.gelu %h : tensor<4x64xf32>
    %y = graph.linear %g, %w2 {transpose_weight = true} : (tensor<4x64xf32>, tensor<16x64xf32>) -> tensor<4x16xf32>
    return %y : tensor<4x16xf32>
  }
}
