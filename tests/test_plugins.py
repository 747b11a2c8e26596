"""Extensions from outside the library: a package installed beside ragmetrics (here, in a
folder on the path with its own ``.dist-info``, as pip installs one) declares an entry point
of the group ``ragmetrics.plugins``; its metric, paired test, correction, fusion method and
input format are then seen by the API and by the ``ragmetrics`` command, in a fresh
process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLUGIN = '''
import numpy as np

def _first_hit(judged, cutoff):
    """1 if the first doc is relevant."""
    return (judged.hits(1, 1) > 0).astype(float)

def _sign(d, alpha, n, seed):
    share = float((d > 0).mean()) if len(d) else 0.5
    p = 1.0 if share in (0.0, 1.0) or not d.any() else min(1.0, 2 * min(share, 1 - share) + 0.5)
    return p, float(min(d.min(), 0.0)), float(max(d.max(), 0.0))

def register():
    from ragmetrics.metrics import registry
    from ragmetrics.analysis import stats
    from ragmetrics.fusion import FusionMethod, register_fusion_method
    from ragmetrics.data import _files as files
    from ragmetrics.data._run import Run
    from ragmetrics.data._qrels import Qrels

    registry.register(registry.MetricSpec(
        "toy_first_hit", _first_hit, registry.Cutoff.OPTIONAL, "classic", "a plug-in's metric"))
    stats.register_test(stats.PairedTestSpec("toy_sign", "toy sign test", None, _sign))
    stats.register_correction(stats.CorrectionSpec(
        "toy_double", "doubling", "FWER", lambda p: np.minimum(1.0, 2 * p)))
    register_fusion_method(FusionMethod(
        "toy_first", "the first run's scores", "a plug-in", lambda table, runs, params:
        np.where(np.isin(np.arange(table.n_cand), runs[0].cand), 1.0, 0.0)))
    files.register_format(files.InputFormat(
        "toy_lines", (".toylines",), None,
        lambda path: Qrels.from_dict({q: {d: 1} for q, d in (l.split() for l in open(path))}),
        lambda path, name: Run.from_lists({q: [d] for q, d in (l.split() for l in open(path))}),
    ))
'''


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    site = tmp_path_factory.mktemp("site")
    (site / "ragmetrics_toy_plugin").mkdir()
    (site / "ragmetrics_toy_plugin" / "__init__.py").write_text(PLUGIN)
    info = site / "ragmetrics_toy_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ragmetrics-toy-plugin\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(
        "[ragmetrics.plugins]\ntoy = ragmetrics_toy_plugin:register\n"
    )
    (site / "broken_plugin-0.1.dist-info").mkdir()
    (site / "broken_plugin-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n"
    )
    (site / "broken_plugin-0.1.dist-info" / "entry_points.txt").write_text(
        "[ragmetrics.plugins]\nbroken = no_such_module_anywhere:register\n"
    )
    data = tmp_path_factory.mktemp("data")
    (data / "qrels.txt").write_text("".join(f"q{i} 0 a 1\n" for i in range(8)))
    for name, first in (("a", "a"), ("b", "x")):
        (data / f"{name}.txt").write_text(
            "".join(f"q{i} Q0 {first} 1 2.0 {name}\nq{i} Q0 z 2 1.0 {name}\n" for i in range(8))
        )
    (data / "run.toylines").write_text("".join(f"q{i} a\n" for i in range(8)))
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONWARNINGS": "default"}
    return {"env": env, "data": str(data)}  # type: ignore[dict-item]


def _run(installed: dict, *args: str) -> subprocess.CompletedProcess[str]:  # type: ignore[type-arg]
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=installed["env"],
        cwd=installed["data"], timeout=120,
    )  # fmt: skip


def test_the_command_line_sees_a_plugins_components(installed: dict) -> None:  # type: ignore[type-arg]
    listed = _run(installed, "-m", "ragmetrics", "metrics")
    assert listed.returncode == 0 and "toy_first_hit" in listed.stdout, listed.stderr
    assert "broken" in listed.stderr and "failed to load" in listed.stderr  # named, not fatal
    scored = _run(
        installed, "-m", "ragmetrics", "evaluate", "-m", "toy_first_hit@3", "qrels.txt", "a.txt"
    )
    assert scored.returncode == 0 and "1.0000" in scored.stdout, scored.stderr
    compared = _run(
        installed, "-m", "ragmetrics", "compare", "-m", "toy_first_hit", "--test", "toy_sign",
        "--correction", "toy_double", "qrels.txt", "a.txt", "b.txt",
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    fused = _run(
        installed,
        "-m",
        "ragmetrics",
        "fuse",
        "--method",
        "toy_first",
        "--norm",
        "none",
        "-o",
        "f.txt",
        "a.txt",
        "b.txt",
    )
    assert fused.returncode == 0, fused.stderr
    assert Path(installed["data"], "f.txt").read_text().startswith("q")
    read = _run(installed, "-m", "ragmetrics", "evaluate", "-m", "mrr", "qrels.txt", "run.toylines")
    assert read.returncode == 0 and "1.0000" in read.stdout, read.stderr


def test_the_api_sees_a_plugins_components(installed: dict) -> None:  # type: ignore[type-arg]
    script = textwrap.dedent(
        """
        import warnings
        warnings.simplefilter("ignore")  # the broken plug-in's warning
        import ragmetrics as rm
        from ragmetrics.analysis import stats
        qrels = {f"q{i}": {"a": 1} for i in range(8)}
        good = {q: ["a", "z"] for q in qrels}
        bad = {q: ["x", "a"] for q in qrels}
        print(rm.evaluate(qrels, good, ["toy_first_hit@2"]).aggregate["toy_first_hit@2"])
        print(rm.compare(qrels, {"g": good, "b": bad}, ["mrr"], test="toy_sign").tests[0].p_value)
        print(sorted(set(stats.corrections()) - {"none", "bonferroni", "holm", "holm-sidak", "bh", "by"}))
        print(sorted(rm.fuse([good, bad], method="toy_first", norm=None)["q0"]))
        """
    )
    done = _run(installed, "-c", script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:4] == ["1.0", "1.0", "['toy_double']", "['a', 'x', 'z']"]
