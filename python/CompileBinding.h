//===- CompileBinding.h - shardc.compile: the compiler from Python -*- C++ -*-===//
//
//   shardc.compile("model.onnx", "out/", tp=2, dims={"batch": 2, "seq": 32})
//
// Fills the CompileOptions the shardc tool fills from its flags and calls
// the same driver::compile (compiler/Driver/Compile.h): each keyword is a
// flag's name with '_' for '-' (input_shapes for --input-shape,
// weights_dirs for --weights-dir, report for --report), so the checks,
// defaults and artifacts are the tool's. Errors raise shardc.Error with the
// driver's one line each; warnings and the --verbose summary go to
// sys.stderr.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PYTHON_COMPILEBINDING_H
#define SHARDC_PYTHON_COMPILEBINDING_H

#include <pybind11/pybind11.h>

namespace shardc::python {

/// Adds compile() to the module; `error` is shardc.Error.
void defineCompile(pybind11::module_ &module, const pybind11::object &error);

} // namespace shardc::python

#endif
