// RUN: shardc-opt %s --split-input-file --verify-diagnostics
// Bad meshes are rejected with the axis and the numbers at fault.

// expected-error @+1 {{mesh axis "tp" appears twice}}
dist.mesh @m = <["tp"=2, "dp"=2, "tp"=4]>

// -----

// expected-error @+1 {{mesh axis "tp" has size 0; expected a positive size}}
dist.mesh @m = <["dp"=2, "tp"=0]>

// -----

// expected-error @+1 {{mesh axis "dp" has size -2; expected a positive size}}
dist.mesh @m = <["dp"=-2]>

// -----

// expected-error @+1 {{mesh axis 1 has an empty name}}
dist.mesh @m = <["dp"=2, ""=2]>

// -----

// The custom syntax pairs names with sizes; the generic form need not.
// expected-error @+1 {{mesh has 2 axis names but 1 sizes}}
"dist.mesh"() <{sym_name = "m", axis_names = ["dp", "tp"], axis_sizes = array<i64: 2>}> : () -> ()

// -----

func.func @nested() {
  // expected-error @+1 {{expects parent op 'builtin.module'}}
  "dist.mesh"() <{sym_name = "m", axis_names = ["dp"], axis_sizes = array<i64: 2>}> : () -> ()
  return
}

// -----

// expected-error @+1 {{expected '='}}
dist.mesh @m = <["dp" 2]>
