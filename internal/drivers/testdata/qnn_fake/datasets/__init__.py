class Split(list):
    def __init__(self, rows, fingerprint):
        super().__init__(rows)
        self._fingerprint = fingerprint


def load_dataset(path, name=None, **kwargs):
    return {"test": Split(["doc one", "doc two"], "fp-test"), "train": Split(["doc"], "fp-train")}
