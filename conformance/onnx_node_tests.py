"""Runs the ONNX backend node tests for every scatter and gather operator through tensor-scatter.

Two sources, both checked:
  * generated: the node-test generators of the installed onnx package
    (onnx/backend/test/case/node/*.py), collected in memory;
  * shipped: the generated data an older release carries (onnx 1.17.0's
    onnx/backend/test/data/node/<test>/model.onnx + test_data_set_*/{input,output}_*.pb),
    from the directory given with --shipped.

Each case is the node's op type, attributes and inputs handed to `tensor-scatter onnx`, which
calls the library's `onnx` adapter. Outputs must equal the expected outputs exactly (dtype,
shape, every value; NaN matches NaN). The run fails if any case fails, if any expected test did
not run, or if a source holds a test this list does not know (so a new upstream case cannot go
unnoticed).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from harness import run_batch, same_values

OPS = {"Scatter", "ScatterElements", "ScatterND", "Gather", "GatherElements", "GatherND", "TensorScatter"}

SHIPPED_1_17 = {
    "test_gather_0", "test_gather_1", "test_gather_2d_indices", "test_gather_negative_indices",
    "test_gather_elements_0", "test_gather_elements_1", "test_gather_elements_negative_indices",
    "test_gathernd_example_float32", "test_gathernd_example_int32",
    "test_gathernd_example_int32_batch_dim1",
    "test_scatter_elements_with_axis", "test_scatter_elements_with_duplicate_indices",
    "test_scatter_elements_with_negative_indices", "test_scatter_elements_with_reduction_max",
    "test_scatter_elements_with_reduction_min", "test_scatter_elements_without_axis",
    "test_scatter_with_axis", "test_scatter_without_axis",
    "test_scatternd", "test_scatternd_add", "test_scatternd_max", "test_scatternd_min",
    "test_scatternd_multiply",
}
GENERATED = SHIPPED_1_17 | {
    "test_scatter_elements_with_reduction_mul",
    "test_scatternd_max_with_element_indices", "test_scatternd_min_with_element_indices",
    "test_tensorscatter", "test_tensorscatter_circular", "test_tensorscatter_3d",
}


def attrs_of(node: onnx.NodeProto) -> list[str]:
    out = []
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode()
        out += ["--attr", f"{a.name}={v}"]
    return out


def as_array(x) -> np.ndarray:
    return numpy_helper.to_array(x) if isinstance(x, onnx.TensorProto) else np.asarray(x)


def generated_cases():
    from onnx.backend.test.case import node as node_cases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in node_cases.collect_testcases(None):
            if c.model.graph.node[0].op_type in OPS:
                for inputs, outputs in c.data_sets:
                    yield c.name, c.model, [as_array(i) for i in inputs], [as_array(o) for o in outputs]


def shipped_cases(root: Path):
    for d in sorted(root.iterdir()):
        model_file = d / "model.onnx"
        if not model_file.exists():
            continue
        model = onnx.load(str(model_file))
        if model.graph.node[0].op_type not in OPS:
            continue
        for ds in sorted(d.glob("test_data_set_*")):
            def load(kind):
                arrays = []
                for f in sorted(ds.glob(f"{kind}_*.pb"), key=lambda p: int(p.stem.split("_")[1])):
                    t = onnx.TensorProto()
                    t.ParseFromString(f.read_bytes())
                    arrays.append(numpy_helper.to_array(t))
                return arrays
            yield d.name, model, load("input"), load("output")


def perturbed(expected: np.ndarray) -> np.ndarray:
    """The expected output with its first element changed (for --self-check)."""
    bad = expected.copy()
    flat = bad.reshape(-1)
    flat[0] = (not flat[0]) if bad.dtype == np.bool_ else flat[0] + 1
    return bad


def run_source(label: str, cases, expected_names: set[str], work: Path,
               self_check: bool = False) -> tuple[int, list[str]]:
    cases = list(cases)
    if self_check:
        cases = [(n, m, i, [perturbed(o[0])]) for n, m, i, o in cases]
    invocations, checks = [], []
    for n, (name, model, inputs, outputs) in enumerate(cases):
        node = model.graph.node[0]
        args = ["onnx", node.op_type]
        for i, arr in enumerate(inputs):
            p = work / f"{label}_{n}_in{i}.npy"
            np.save(p, arr)
            args += ["--input", str(p)]
        out = work / f"{label}_{n}_out.npy"
        args += ["--out", str(out)] + attrs_of(node)
        invocations.append(args)
        checks.append((name, out, outputs[0]))
    results = run_batch(invocations, work)
    failures = []
    for (name, out, expected), status in zip(checks, results):
        if status != "ok":
            failures.append(f"{label}/{name}: {status}")
        elif not same_values(np.load(out), expected):
            got = np.load(out)
            failures.append(f"{label}/{name}: output differs\n  expected {expected!r}\n  got      {got!r}")
    ran = {name for name, *_ in cases}
    for missing in sorted(expected_names - ran):
        failures.append(f"{label}/{missing}: expected but not found, so it did not run")
    for extra in sorted(ran - expected_names):
        failures.append(f"{label}/{extra}: found but not in the expected list (add it)")
    wrong = sum(1 for f in failures if not f.endswith(("did not run", "(add it)")))
    print(f"{label}: {len(cases)} cases from {len(ran)} tests executed, {len(cases) - wrong} passed")
    if self_check:
        # Every perturbed case must have been caught; then the self-check itself passes.
        return len(cases), [] if wrong == len(cases) else [f"{label}: self-check caught only {wrong} of {len(cases)}"]
    return len(cases), failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shipped", type=Path, required=True,
                    help="onnx 1.17.0's onnx/backend/test/data/node directory")
    ap.add_argument("--self-check", action="store_true",
                    help="change every expected output and require every case to fail")
    a = ap.parse_args()
    print(f"onnx {onnx.__version__} generators; shipped data from {a.shipped}")
    failures, total = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for label, cases, names in (
            ("generated", generated_cases(), GENERATED),
            ("shipped-1.17.0", shipped_cases(a.shipped), SHIPPED_1_17),
        ):
            n, f = run_source(label, cases, names, work, a.self_check)
            total += n
            failures += f
    for f in failures:
        print("FAIL", f)
    print(f"ONNX node tests: {total} cases executed, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
