"""A calibrated graph's encodings as llama.py's _encoding_override copies them: read from a
graph, written portably, and given to another graph node by node (qnn_launch.py's
--save-calibration and --load-calibration)."""


QDQ_OPS = {"quantize_per_tensor", "dequantize_per_tensor", "quantize_per_channel", "dequantize_per_channel",
           "quantize_affine", "dequantize_affine"}


def is_qdq(node):
    """Whether node is a quantize or dequantize op (torch's quantized_decomposed or torchao's):
    the ops _encoding_override copies (a name test alone would also take quantized_decomposed's
    embedding ops)."""
    parts = str(node.target).split(".")
    return node.op == "call_function" and len(parts) > 1 and parts[1] in QDQ_OPS


def constants(module):
    """Each get_attr node of module's graph with its tensor and the arguments of the quantize
    and dequantize ops that read it (its encoding), as they are now."""
    out = {}
    for n in module.graph.nodes:
        if n.op != "get_attr":
            continue
        chain, todo = {}, [u for u in n.users if is_qdq(u)]
        while todo:
            u = todo.pop()
            chain[u] = u.args
            todo.extend(v for v in u.users if is_qdq(v))
        out[n] = (attr(module, n.target), chain)
    return out


def attr(module, target):
    """The tensor a get_attr target names (dotted, as fx writes it)."""
    for a in target.split("."):
        module = getattr(module, a)
    return module


def set_attr(module, target, value):
    """Replaces the tensor a get_attr target names."""
    *path, last = target.split(".")
    for a in path:
        module = getattr(module, a)
    setattr(module, last, value)


def portable(a):
    """An argument of a quantize or dequantize op as torch.load(weights_only=True) reads it
    back: a graph node by its name."""
    if isinstance(a, (list, tuple)):
        return type(a)(portable(x) for x in a) if isinstance(a, tuple) else [portable(x) for x in a]
    if hasattr(a, "op") and hasattr(a, "graph"):
        return ("node", a.name)
    return a


def restored(a, nodes):
    """An argument portable() wrote, its node markers resolved in the graph being given it."""
    if isinstance(a, tuple) and len(a) == 2 and a[0] == "node" and isinstance(a[1], str):
        return nodes[a[1]]
    if isinstance(a, (list, tuple)):
        return type(a)(restored(x, nodes) for x in a) if isinstance(a, tuple) else [restored(x, nodes) for x in a]
    return a


def chain(node):
    """node's users as _encoding_override walks them: for each, its name and target and, for
    a quantize or dequantize op, its arguments after the first (the encoding) and its own users."""
    return [(u.name, str(u.target), portable(tuple(u.args[1:])) if is_qdq(u) else None, chain(u) if is_qdq(u) else [])
            for u in node.users]


def activations(module):
    """The nodes whose users carry an activation encoding, in graph order (_encoding_override's list)."""
    return [n for n in module.graph.nodes if n.op in ("call_function", "placeholder") and not is_qdq(n)]


def encodings(module):
    """What _encoding_override copies from a calibrated graph, by node name and get_attr target."""
    return {"activations": [(n.name, chain(n)) for n in activations(module)],
            "constants": [(n.target, attr(module, n.target).detach().clone(), chain(n))
                          for n in module.graph.nodes if n.op == "get_attr"]}


def give(node, saved, nodes, where):
    """Gives node's quantize and dequantize users the saved chain's encodings."""
    users = list(node.users)
    if len(users) != len(saved):
        raise ValueError("%s has %d users here and %d in the file" % (where, len(users), len(saved)))
    for (name, target, args, sub), u in zip(saved, users):
        if name == "output":
            continue
        if target != str(u.target):
            raise ValueError("%s's user %s is %s here and %s in the file" % (where, u.name, u.target, target))
        if args is not None:
            u.args = (u.args[0], *restored(args, nodes))
            give(u, sub, nodes, where + " > " + u.name)


def apply_encodings(saved, module, file):
    """Gives module's graph the saved encodings as _encoding_override would (nodes matched by
    name in order, constants by target), keeping each constant whose shape differs (a table
    with a row per position: the deployed window's own) with its own encoding; returns those kept."""
    acts = activations(module)
    consts = [n for n in module.graph.nodes if n.op == "get_attr"]
    names = [n.name for n in acts], [name for name, _ in saved["activations"]]
    targets = [n.target for n in consts], [t for t, _, _ in saved["constants"]]
    for what, (here, there) in (("nodes", names), ("constants", targets)):
        if here != there:
            first = next((i for i, (a, b) in enumerate(zip(here, there)) if a != b), min(len(here), len(there)))
            raise SystemExit("qnn_launch: the calibration file %s was calibrated on another graph: its %s differ from this "
                             "run's at position %d (%s here, %s in the file; %d here, %d in the file)"
                             % (file, what, first, here[first] if first < len(here) else "none",
                                there[first] if first < len(there) else "none", len(here), len(there)))
    nodes = {n.name: n for n in module.graph.nodes}
    kept = []
    try:
        for n, (_, sub) in zip(acts, saved["activations"]):
            give(n, sub, nodes, n.name)
        for n, (target, value, sub) in zip(consts, saved["constants"]):
            own = attr(module, target)
            if own.shape != value.shape:
                kept.append("%s %s (the file's %s)" % (target, "x".join(map(str, own.shape)), "x".join(map(str, value.shape))))
                continue
            set_attr(module, target, value)
            users = list(n.users)
            if users and str(users[0].target).split(".")[1:2] in (["quantize_per_tensor"], ["dequantize_per_tensor"]):
                give(n, sub, nodes, target)  # parameter_override's rule: per-tensor encodings are op arguments
    except ValueError as e:
        raise SystemExit("qnn_launch: the calibration file %s does not fit this run's graph: %s" % (file, e))
    module.recompile()
    return kept
