"""Count the nodes of a saved torch.export program (the QDQ program the pinned ExecuTorch's
Qualcomm script saves before lowering, artifact/decode_qdq.pt2) and the quantize and
dequantize ops among them. exe-expo test support (e2e/realtool, vendor_test.go).

Usage: qdq_ops.py PROGRAM.pt2
Prints one JSON line: {"nodes": n, "quantize": n, "dequantize": n, "inputs": n, "outputs": n}.
"""

import json
import sys

import torch
import torchao.quantization.pt2e  # noqa: F401 - registers the quantized_decomposed ops the program uses


def main():
    ep = torch.export.load(sys.argv[1])
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    sig = ep.graph_signature
    print(json.dumps({
        "nodes": len(ep.graph.nodes),
        "quantize": sum("quantize_per" in t and "dequantize" not in t for t in targets),
        "dequantize": sum("dequantize_per" in t for t in targets),
        "inputs": len(sig.user_inputs), "outputs": len(sig.user_outputs),
    }))


if __name__ == "__main__":
    main()
