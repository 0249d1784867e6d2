// RUN: shardc-opt %s --split-input-file --verify-diagnostics
// Shardings on op results (dist.shardings) and on function arguments and
// results (dist.sharding) are checked against the mesh and the value's type.

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @unknown_mesh(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result 0: unknown mesh @nope}}
  %0 = graph.neg %x {dist.shardings = [#dist.sharding<@nope, [{}, {}]>]} : tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @unknown_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{unknown mesh axis "xx"; the mesh has "dp", "tp"}}
  %0 = graph.neg %x {dist.shardings = [#dist.sharding<@m, [{"xx"}, {}]>]} : tensor<4x8xf32>
  return
}

// -----

dist.mesh @single = <[]>

func.func @axis_of_a_mesh_without_axes(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{unknown mesh axis "tp"; the mesh has no axes}}
  %0 = graph.neg %x {dist.shardings = [#dist.sharding<@single, [{}, {}], partial={"tp"}>]} : tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @axis_on_two_dims(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh axis "tp" is used twice}}
  %0 = graph.neg %x {dist.shardings = [#dist.sharding<@m, [{"tp"}, {"dp", "tp"}]>]} : tensor<8x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @axis_on_a_dim_and_partial(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh axis "dp" is used twice}}
  %0 = graph.neg %x {dist.shardings = [#dist.sharding<@m, [{"dp"}, {}], partial={"dp"}>]} : tensor<8x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @rank(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{sharding has 2 dims but the tensor has rank 3}}
  %0 = graph.neg %x {dist.shardings = [#dist.sharding<@m, [{"dp"}, {"tp"}]>]} : tensor<2x4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @not_divisible(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{dim 1 of size 10 is not divisible by 4 (axes "tp")}}
  %0 = graph.neg %x {dist.shardings = [#dist.sharding<@m, [{"dp"}, {"tp"}]>]} : tensor<4x10xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @not_divisible_by_two_axes(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{dim 0 of size 4 is not divisible by 8 (axes "dp", "tp")}}
  %0 = graph.neg %x {dist.shardings = [#dist.sharding<@m, [{"dp", "tp"}, {}]>]} : tensor<4x10xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.shardings' must hold one sharding per result; expected 1 but got 2}}
  %0 = graph.neg %x {dist.shardings = [#dist.sharding<@m, [{}, {}]>, #dist.sharding<@m, [{}, {}]>]} : tensor<4x8xf32>
  return
}

// -----

func.func @not_an_array(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.shardings' must be an array of #dist.sharding; got "dp"}}
  %0 = graph.neg %x {dist.shardings = "dp"} : tensor<4x8xf32>
  return
}

// -----

func.func @not_a_sharding(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.shardings' element 0 must be a #dist.sharding; got 1 : i64}}
  %0 = graph.neg %x {dist.shardings = [1]} : tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @argument_attribute_on_an_op(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.sharding' belongs on function arguments and results; an op's results take 'dist.shardings'}}
  %0 = graph.neg %x {dist.sharding = #dist.sharding<@m, [{}, {}]>} : tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

// expected-error @+1 {{argument 1: unknown mesh axis "pp"; the mesh has "dp", "tp"}}
func.func @argument(%x: tensor<4x8xf32>, %y: tensor<4x8xf32> {dist.sharding = #dist.sharding<@m, [{"pp"}, {}]>}) {
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

// expected-error @+1 {{result 0: dim 1 of size 6 is not divisible by 4 (axes "tp")}}
func.func private @result() -> (tensor<4x6xf32> {dist.sharding = #dist.sharding<@m, [{}, {"tp"}]>})

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

// expected-error @+1 {{argument 0: a sharding needs a ranked tensor; got 'i32'}}
func.func private @scalar(i32 {dist.sharding = #dist.sharding<@m, []>})

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

// expected-error @+1 {{argument 0: 'dist.sharding' must be a #dist.sharding; got "dp"}}
func.func private @not_a_sharding(tensor<4xf32> {dist.sharding = "dp"})

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

// expected-error @+1 {{'dist.shardings' belongs on ops; function arguments take 'dist.sharding'}}
func.func private @op_attribute_on_an_argument(tensor<4xf32> {dist.shardings = [#dist.sharding<@m, [{}]>]})

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

// expected-error @+1 {{'dist.shardings' belongs on ops; function results take 'dist.sharding'}}
func.func private @op_attribute_on_a_result() -> (tensor<4xf32> {dist.shardings = [#dist.sharding<@m, [{}]>]})

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

// expected-error @+1 {{expected 'partial'}}
func.func private @syntax(tensor<4xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}], replicated={"tp"}>})
