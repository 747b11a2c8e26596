"""Docs that cannot go stale: every Python block and shell command of README.md, docs/*.md
and the integration READMEs runs here, on the files `make demo` writes.

Each document's Python blocks run in order in one namespace, in a folder that holds the
demo's output. A document names objects it does not make (a retriever, a chat model, "your"
runs): the prelude below gives each of them a small real one, the same kind of object the
text describes. A block whose first line is ``# requires: <module>`` runs when that module
is installed and is skipped, saying so, when it is not. Shell blocks run in bash; the two set-up
commands (``make demo``, ``make test``: this suite is what the second runs) and ``pip
install`` lines are checked instead of run: the targets, paths and extras they name exist.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
import tomllib

from tests.conftest import restore_registries

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "integrations" / "langchain" / "README.md",
    ROOT / "integrations" / "llama-index" / "README.md",
]
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks(path: Path, language: str) -> list[tuple[int, str]]:
    """The fenced blocks of one language in a markdown file, with their first line number."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        if match.group(1) == language:
            found.append((text.count("\n", 0, match.start()) + 2, match.group(2)))
    return found


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder as a user's after `make demo`: demo-output/ and .venv (this environment)."""
    work = tmp_path_factory.mktemp("docs")
    env = {**os.environ, "RAGMETRICS_DEMO_OUTPUT": str(work / "demo-output")}
    subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo" / "run.py")],
        env=env,
        check=True,
        capture_output=True,
        timeout=600,
    )
    (work / ".venv").symlink_to(Path(sys.executable).parents[1])
    return work


@pytest.fixture(scope="module", autouse=True)
def _one_ray_for_the_module() -> Any:
    """The documents that use Ray share one local instance, stopped after this module."""
    yield
    if "ray" in sys.modules and sys.modules["ray"].is_initialized():
        sys.modules["ray"].shutdown()


# --- the objects each document names without making them --------------------------------

_SMALL = """
import ragmetrics as rm
corpus = {
    "d1": "The first report was written by Ada Lovelace in London.",
    "d2": "A recipe for bread: flour, water, salt and time.",
    "d3": "Ada wrote notes on the analytical engine.",
    "d4": "The treaty was signed in May, after long talks.",
    "d5": "The weather in May was mild.",
}
dataset = rm.RetrievalDataset(
    queries={"q1": "who wrote the first report", "q2": "when was the treaty signed"},
    corpus=corpus,
    relevant_docs={"q1": {"d1": 2, "d3": 1}, "q2": {"d4": 1}},
)
run_a = bm25 = a = run_bm25 = rm.Run.from_dict(
    {"q1": {"d1": 0.9, "d2": 0.5, "d3": 0.4}, "q2": {"d4": 0.7, "d5": 0.6}}, name="bm25"
)
run_b = hybrid = b = run_dense = rm.Run.from_dict(
    {"q1": {"d3": 0.8, "d1": 0.7, "d2": 0.1}, "q2": {"d5": 0.9, "d4": 0.3}}, name="hybrid"
)
reranked = rm.Run.from_lists({"q1": ["d3", "d1"], "q2": ["d4"]})
first_stage = candidates = run_a
metrics = ["ndcg@10", "map@100"]
human_qrels = rm.Qrels.from_dict(
    {"q1": {"d1": 5, "d2": 1, "d3": 4}, "q2": {"d4": 4, "d5": 2}}
)
def judge(prompt):  # a function judge: the model a user would call
    return "4" if "Ada" in prompt or "treaty" in prompt else "2"
"""

_FILES = """
import gzip, shutil
import pyarrow.parquet
run_a.to_parquet("run.parquet")
dataset.qrels.to_parquet("qrels.parquet")
run_a.to_trec("run.txt")
with open("run.txt", "rb") as plain, gzip.open("run.txt.gz", "wb") as packed:
    shutil.copyfileobj(plain, packed)
os.makedirs("run_parts", exist_ok=True)
shutil.copy("run.parquet", "run_parts/part-0.parquet")
table = pyarrow.parquet.read_table("run.parquet")
"""

_RAY = """
import ray
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
ray.init(num_cpus=min(2, os.cpu_count() or 1), include_dashboard=False, log_to_driver=False,
         ignore_reinit_error=True)
"""

PRELUDES: dict[str, str] = {
    "README.md": "import os\n"
    + _SMALL
    + _FILES
    + _RAY
    + """
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from ragmetrics.compat.tutorial import RetrievalResult
class NamedChat(FakeListChatModel):  # a chat model as providers make them: with a model name
    model_name: str = "offline-chat-1"
chat_model = NamedChat(responses=["4", "5", "2"])
sessions = pages = dataset.corpus
retrieved_chunk_texts = ["written by Ada Lovelace", "nothing like this", "signed in May"]
gold_docs = [[corpus["d1"]], [corpus["d4"]]]
retrieved_chunks = [["written by Ada Lovelace", "flour, water"], ["The weather in May"]]
results = [RetrievalResult("q1", ["d1", "d2"], {"d1"}), RetrievalResult("q2", ["d5"], {"d4"})]
ray_dataset = ray.data.from_arrow(table)
""",
    "scale.md": "import os\n"
    + _SMALL
    + _FILES
    + _RAY
    + """
import pyarrow.dataset
qrels = dataset.qrels
dataset = pyarrow.dataset.dataset("run_parts/")
batches = [rm.Run.from_dict({q: run_a.to_dict()[q]}) for q in run_a.query_ids]
def my_batches():
    yield from batches
""",
    "goldset.md": "import os\n" + _SMALL,
    "langchain/README.md": """
import os
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.runnables import RunnableParallel
import ragmetrics as rm
from ragmetrics.datasets import people
BM25Retriever = integration_helpers("langchain").BM25Retriever
data = people(40)
corpus, queries, relevant = data.corpus, data.queries, data.relevant_docs
ids_only = {q: list(docs) for q, docs in relevant.items()}  # qa.json as tools write it: ids
rm.RetrievalDataset(queries=queries, corpus=corpus, relevant_docs=ids_only).to_json("qa.json")
documents = [Document(page_content=t, metadata={"doc_id": d}) for d, t in corpus.items()]
retriever = BM25Retriever(documents=documents, k=10)
chain = RunnableParallel(
    first=retriever.with_config(run_name="bm25"),
    second=BM25Retriever(documents=documents, k=3).with_config(run_name="reranker"),
)
tracer = BaseCallbackHandler()
docs = documents[:3]
""",
    "llama-index/README.md": """
import os
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor import SimilarityPostprocessor
import ragmetrics as rm
from ragmetrics.datasets import people
HashingEmbedding = integration_helpers("llama-index").HashingEmbedding
data = people(40)
corpus, queries, relevant = data.corpus, data.queries, data.relevant_docs
ids_only = {q: list(docs) for q, docs in relevant.items()}  # qa.json as tools write it: ids
rm.RetrievalDataset(queries=queries, corpus=corpus, relevant_docs=ids_only).to_json("qa.json")
documents = [Document(text=t, id_=d) for d, t in corpus.items()]  # an ordinary index
index = VectorStoreIndex.from_documents(documents, embed_model=HashingEmbedding())
retriever = index.as_retriever(similarity_top_k=10)
reranker = SimilarityPostprocessor(similarity_cutoff=0.0)
query_engine = index.as_query_engine(llm=MockLLM())
""",
}
PRELUDES["traces.md"] = PRELUDES["llama-index/README.md"]


def integration_helpers(folder: str) -> Any:
    """An integration's test helpers (``integrations/<folder>/tests/helpers.py``), loaded by
    path: the integrations' tests are their own packages, not part of this suite's."""
    name = f"_helpers_of_{folder.replace('-', '_')}"
    if name not in sys.modules:
        where = ROOT / "integrations" / folder / "tests" / "helpers.py"
        spec = importlib.util.spec_from_file_location(name, where)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _prelude(path: Path) -> str:
    key = path.name if path.parent.name in ("docs", ROOT.name) else f"{path.parent.name}/README.md"
    return PRELUDES.get(key, "")


def _documents_with(language: str) -> list[Path]:
    return [p for p in DOCUMENTS if blocks(p, language)]


@pytest.mark.parametrize("path", _documents_with("python"), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_python_block_runs(
    path: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    restore_registries(monkeypatch)  # the docs' example components stay in the docs
    where = path.relative_to(ROOT)
    folder = workdir / where.with_suffix("").as_posix().replace("/", "-")
    folder.mkdir(exist_ok=True)
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(ROOT))
    namespace: dict[str, Any] = {"__name__": "__docs__", "integration_helpers": integration_helpers}
    ran, skipped = 0, []
    with warnings.catch_warnings():
        # the documents show warnings on purpose (an id mismatch, a key clash): they are shown,
        # not errors, when a user runs these lines
        warnings.simplefilter("default")
        exec(compile(_prelude(path), f"<prelude of {where}>", "exec"), namespace)
        for line, code in blocks(path, "python"):
            needed = re.match(r"# requires: (\S+)", code)
            if needed and importlib.util.find_spec(needed.group(1)) is None:
                skipped.append(f"line {line}: needs {needed.group(1)}")
                continue
            try:
                exec(compile(code, f"{where}:{line}", "exec"), namespace)
            except Exception as error:
                raise AssertionError(f"{where}, the block at line {line}: {error!r}") from error
            ran += 1
    assert ran, "no block ran"
    for reason in skipped:
        warnings.warn(f"{where}: a block was not run ({reason})", UserWarning, stacklevel=1)


# --- shell -------------------------------------------------------------------------------------


def _commands(code: str) -> list[str]:
    """The commands of a shell block, continuation lines joined, comments dropped."""
    joined = code.replace("\\\n", " ")
    return [
        line.strip()
        for line in joined.split("\n")
        if line.strip() and not line.strip().startswith("#")
    ]


def _checked_not_run(command: str) -> bool:
    """``make demo`` / ``make test`` and ``pip install`` are checked, not run (see above)."""
    words = shlex.split(command, comments=True)
    if words[:1] == ["make"]:
        targets = re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.MULTILINE)
        assert set(words[1:]) <= set(targets), command
        return True
    if words[:2] == ["pip", "install"]:
        extras_declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
            "optional-dependencies"
        ]
        for target in words[2:]:
            location, _, extras = target.partition("[")
            assert (ROOT / location).exists(), f"{command}: no {location} in the repository"
            for extra in filter(None, extras.rstrip("]").split(",")):
                assert extra in extras_declared, f"{command}: no extra {extra!r}"
        return True
    return False


@pytest.mark.parametrize("path", _documents_with("bash"), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shell_command_runs(path: Path, workdir: Path) -> None:
    for line, code in blocks(path, "bash"):
        script = [c for c in _commands(code) if not _checked_not_run(c)]
        if not script:
            continue
        done = subprocess.run(
            ["bash", "-e", "-c", "\n".join(script)],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{path.name}, the block at line {line}:\n{done.stderr}"
    assert (workdir / "demo-output" / "report.html").exists()


def test_the_tour_leaves_the_demo_report_alone(workdir: Path) -> None:
    tour = "\n".join(code for _, code in blocks(ROOT / "README.md", "bash"))
    assert "-o report.html" not in tour  # make demo's report is demo-output/report.html


@pytest.mark.parametrize("package", ["langchain", "llama-index"])
def test_the_newest_tested_versions_are_the_ones_installed(package: str) -> None:
    from importlib.metadata import version

    text = (ROOT / "integrations" / package / "README.md").read_text()
    rows = re.findall(
        r"^\| ([\w.-]+)(?: \(tests\))? \| ([\d.]+) \| ([\d.]+) \|$", text, re.MULTILINE
    )
    assert rows
    pins = dict(
        line.split("==")
        for line in (ROOT / "integrations" / "tested.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )
    for name, _oldest, newest in rows:
        assert pins.get(name) == newest, (
            f"{package} README: {name} {newest}, integrations/tested.txt {pins.get(name)}"
        )
        assert version(name) == newest, (
            f"{package} README: {name} {newest}, installed {version(name)}"
        )
