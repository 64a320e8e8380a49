"""Fit the calibration terms of docs/research/qnn-calibration.md from the probe's results and
predict the QNN runner minutes of Qwen3-0.6B and Qwen3-1.7B per window, calibrated at each
window's own length and calibrated once at 2k. Research arithmetic; never shipped.

Usage: predict.py results.jsonl   (one calib_times.py result per line, with a "name")
Prints the fits and a markdown table.
"""

import json
import math
import sys

REF = 2048
# config/pipeline.yaml's export_times for QNN (Qwen3-0.6B, 751,632,384 parameters): the
# plan's 2k time is the geometric mean of the two chips', its 4k the SM8750 figure.
P06, P17 = 751632384, 2031739904
T2 = math.sqrt(2434 * 3637)
T4 = 5987
T2_8750, T4_8750 = 2434, 5987
CALIB_GROWTH_4K = 3.92  # the seed's SM8750 calibration, 2k to 4k (issue 38)
# The seed's SM8650 2k breakdown (docs/research/run.md): the calibration loop's share.
CALIB_SHARE = 1761 / 3637
JOB_LIMIT = 350


def slope(x1, y1, x2, y2):
    return math.log(y2 / y1) / math.log(x2 / x1)


def main():
    rows = {}
    for line in open(sys.argv[1]):
        r = json.loads(line)
        rows[r["name"]] = r
    fwd = {w: rows["real-%d-fwd" % w]["forward_s"][0] for w in (1024, 2048, 4096)}
    # search = the SeqMSE pass less the plain pass of the same run, per candidate
    search = {}
    for w in (1024, 2048, 4096):
        r = rows.get("real-%d-sm5" % w)
        if r:
            search[w] = (r["seq_mse_s"][0] - r["forward_s"][0]) / r["seq_mse"]
    a_f = slope(2048, fwd[2048], 4096, fwd[4096])
    ws = sorted(search)
    a_s = slope(ws[0], search[ws[0]], ws[-1], search[ws[-1]])
    k = 50 * search[2048] / fwd[2048]  # the recipe's 50 candidates, against one forward pass, at 2k
    print("forward: %s s; exponent 2k->4k %.2f, 1k->2k %.2f" % (fwd, a_f, slope(1024, fwd[1024], 2048, fwd[2048])))
    print("search per candidate: %s s; exponent %.2f; at 2k, 50 candidates = %.1f forward passes" % (
        {w: round(s, 2) for w, s in search.items()}, a_s, k))

    # The runner: Qwen3-0.6B (SeqMSE on) at 2k, the plan's time split by the seed's SM8650
    # shares: calibration C2 = F2 + S2 = F2 (1 + k) (one row, the document padded to the
    # window), and the rest (other quantize, HTP compile, load). On SM8750 the calibration
    # grew 3.92x from 2k to 4k (the seed's study, issue 38); what the total's 2.46x leaves
    # for the rest is its growth.
    c2 = CALIB_SHARE * T2
    f2 = c2 / (1 + k)
    s2 = k * f2
    rest2 = T2 - c2
    a_c = math.log2(CALIB_GROWTH_4K)
    a_r = math.log2((T4_8750 - CALIB_GROWTH_4K * CALIB_SHARE * T2_8750) / ((1 - CALIB_SHARE) * T2_8750))
    print("runner, 0.6B at 2k: %.0f s = forward %.0f + search %.0f + rest %.0f; calibration exponent %.2f (runner), rest %.2f"
          % (T2, f2, s2, rest2, a_c, a_r))

    def minutes(params, w, seq_mse, once):
        scale = params / P06
        x = w / REF
        f, s, rest = f2 * scale, s2 * scale if seq_mse else 0, rest2 * scale
        if once and w > REF:
            calib = f + s + f * x ** a_f  # the 2k calibration, then one pass of the window's own graph
        elif seq_mse:
            calib = (f + s) * x ** a_c  # as the runner measured it
        else:
            calib = f * x ** a_f  # forward passes only (one row)
        return (calib + rest * x ** a_r) / 60

    def today(params, w):
        g = slope(2048, T2, 4096, T4)
        return T2 * params / P06 * (w / REF) ** g / 60

    print()
    print("| model | window | today's plan | own-window calibration (two terms) | calibrated once at 2k |")
    print("|---|---|---|---|---|")
    for name, params, sm in (("Qwen3-0.6B", P06, True), ("Qwen3-1.7B", P17, False)):
        for w in (2048, 4096, 8192, 16384, 32768):
            cells = []
            for v in (today(params, w), minutes(params, w, sm, False), minutes(params, w, sm, True)):
                cells.append("%d%s" % (math.ceil(v), "" if v <= JOB_LIMIT else " (over)"))
            print("| %s | %dk | %s |" % (name, w // 1024, " | ".join(cells)))


if __name__ == "__main__":
    main()
