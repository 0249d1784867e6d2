module {
  func.func @main(%x: tensor<4xf32> {graph.name = "x"}, %z: tensor<4xf32> {graph.name = "z"}) -> (tensor<4xf32> {graph.name = "y"}, tensor<4xf32> {graph.name = "x"}) {
    %y = graph.add %x, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %y, %x : tensor<4xf32>, tensor<4xf32>
  }
}
