"""The report's per-query explorer: the table every query x metric x run, readable with
scripts off; one file of bounded size; and, in a real headless Chromium (Debian's package,
driven by Selenium), sorting, filtering, a query's view and two runs side by side."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragmetrics as rm
from ragmetrics.report._report import write_report

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def _inputs() -> tuple[rm.RetrievalDataset, dict[str, rm.Run]]:
    rng = random.Random(5)
    corpus = {f"doc{i}": f"Text of document {i} <b>not bold</b> & more." for i in range(60)}
    queries = {f"q{i}": f"Question number {i}?" for i in range(30)}
    queries["<b>x</b>"] = "A hostile id </script><script>alert(1)</script>"
    judged = {q: {f"doc{j}": rng.randint(1, 5) for j in rng.sample(range(60), 8)} for q in queries}
    runs = {
        name: rm.Run.from_lists(
            {q: [f"doc{j}" for j in rng.sample(range(60), 12)] for q in queries}, name=name
        )
        for name in ("alpha", "beta", "gamma")
    }
    return rm.RetrievalDataset(queries=queries, corpus=corpus, relevant_docs=judged), runs


def _report(tmp_path: Path, **keywords: Any) -> tuple[Path, rm.Comparison]:
    dataset, runs = _inputs()
    comparison = rm.compare(
        dataset.qrels, runs, ["ndcg@5", "ra_nwg@5", "recall@10"], n_permutations=200
    )
    path = write_report(
        comparison, tmp_path / "report.html", dataset=dataset, plots=False, **keywords
    )
    return path, comparison


def test_the_table_holds_every_value_without_scripts(tmp_path: Path) -> None:
    path, comparison = _report(tmp_path)
    page = path.read_text()
    table = page[page.index("<table id='rm-queries'>") :]
    table = table[: table.index("</table>")]
    rows = re.findall(r"<tr data-row='\d+'>(.*?)</tr>", table)
    assert len(rows) == 31
    for row in rows:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        query = cells[0].replace("&lt;", "<").replace("&gt;", ">")
        numbers = cells[2:]  # after the query and its question
        expected = [
            comparison.results[name].per_query[query][metric]
            for metric in comparison.metrics
            for name in comparison.runs
        ]
        assert numbers == ["NA" if v is None else f"{v:.4f}" for v in expected]
    # hostile ids and texts are escaped: the only script elements are the explorer's two
    assert (
        page.count("</script>") == 2 and "<b>x</b>" not in page and "alert(1)</script>" not in page
    )
    assert "<noscript>" in page
    assert not re.search(r"(src|href)=['\"]?https?:", page)  # nothing from the network
    data = json.loads(re.search(r"id='rm-data'>(.*?)</script>", page, re.S).group(1))  # type: ignore[union-attr]
    assert data["runs"] == ["alpha", "beta", "gamma"] and data["k"] == 10
    assert data["ids"][-1] == "<b>x</b>"


def test_a_thousand_queries_and_five_runs_fit_in_five_megabytes(tmp_path: Path) -> None:
    rng = random.Random(1)
    corpus_ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(20_000)]
    qrels = {
        f"q{i}": {d: rng.randint(1, 5) for d in rng.sample(corpus_ids, 6)} for i in range(1000)
    }
    runs = {
        f"run{r}": {q: {d: rng.random() for d in rng.sample(corpus_ids, 20)} for q in qrels}
        for r in range(5)
    }
    comparison = rm.compare(
        qrels, runs, ["ndcg@10", "recall@10", "mrr", "ra_nwg@5", "proc@5", "harm@5"],
        n_permutations=100, n_bootstrap=100,
    )  # fmt: skip
    path = write_report(comparison, tmp_path / "big.html", plots=False)
    size = path.stat().st_size
    assert size < 5_000_000, size


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    required = os.environ.get("RAGMETRICS_REQUIRE_BROWSER") == "1"
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing.append("selenium")
    if missing:
        message = f"needs {', '.join(missing)} (apt install chromium chromium-driver)"
        if required:
            pytest.fail(message)
        pytest.skip(message)

    def start(scripts: bool) -> Any:
        options = Options()
        options.binary_location = CHROMIUM
        for flag in (
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--window-size=1280,1600",
        ):  # fmt: skip
            options.add_argument(flag)
        if not scripts:
            options.add_experimental_option(
                "prefs", {"profile.managed_default_content_settings.javascript": 2}
            )
        return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)

    drivers: list[Any] = []

    def make(scripts: bool = True) -> Any:
        drivers.append(start(scripts))
        return drivers[-1]

    yield make
    for driver in drivers:
        driver.quit()


def test_in_a_real_browser_sort_filter_open_and_compare(tmp_path: Path, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    path, comparison = _report(tmp_path)
    driver = browser()
    driver.get(path.as_uri())
    assert driver.find_element(By.ID, "rm-explorer").get_attribute("data-ready") == "1"
    assert driver.find_element(By.ID, "rm-shown").text == "31 of 31 queries"
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe

    # sort by beta's ndcg@5 (column 3: query, question, alpha, beta...), highest first
    header = driver.find_element(By.CSS_SELECTOR, "#rm-queries th[data-col='3']")
    assert "ndcg@5" in header.text and "beta" in header.text
    header.click()
    column = [
        r.find_elements(By.TAG_NAME, "td")[3].text
        for r in driver.find_elements(By.CSS_SELECTOR, "#rm-queries tbody tr")
    ]
    values = [float(v) for v in column]
    assert values == sorted(values, reverse=True)
    header.click()  # a second click: lowest first
    first = driver.find_elements(By.CSS_SELECTOR, "#rm-queries tbody tr")[0]
    assert float(first.find_elements(By.TAG_NAME, "td")[3].text) == min(values)

    # filter by text: only matching queries stay visible
    box = driver.find_element(By.ID, "rm-filter")
    box.send_keys("number 1")  # q1, q10..q19
    visible = [
        r for r in driver.find_elements(By.CSS_SELECTOR, "#rm-queries tbody tr") if r.is_displayed()
    ]
    assert {r.find_elements(By.TAG_NAME, "td")[0].text for r in visible} == {
        "q1",
        *(f"q{i}" for i in range(10, 20)),
    }
    assert driver.find_element(By.ID, "rm-shown").text == "11 of 31 queries"

    # open q12: each run's top 10 with grades, its values, and the evidence it missed
    next(r for r in visible if r.find_elements(By.TAG_NAME, "td")[0].text == "q12").click()
    view = driver.find_element(By.ID, "rm-view")
    assert view.is_displayed() and "Question number 12?" in view.text
    dataset, runs = _inputs()
    grades = dataset.relevant_docs["q12"]
    columns = view.find_elements(By.CLASS_NAME, "rm-col")
    assert len(columns) == 2
    shown = [
        li.find_element(By.TAG_NAME, "code").text
        for li in columns[0].find_elements(By.CSS_SELECTOR, "ol > li")
    ]
    assert shown == list(runs["alpha"]["q12"][:10])
    labels = [
        li.find_element(By.CLASS_NAME, "rm-grade").text
        for li in columns[0].find_elements(By.CSS_SELECTOR, "ol > li")
    ]
    assert labels == [f"grade {grades[d]}" if d in grades else "unjudged" for d in shown]
    assert "Text of document" in columns[0].text  # texts from the dataset's corpus
    missed = {d for d, g in grades.items() if g >= 4 and d not in shown}
    listed = {
        li.find_element(By.TAG_NAME, "code").text
        for li in columns[0].find_elements(By.CSS_SELECTOR, "ul.rm-missed > li")
    }
    assert listed == missed
    ndcg = comparison.results["beta"].per_query["q12"]["ndcg@5"]
    assert f"{ndcg:.4f}" in view.find_element(By.CLASS_NAME, "rm-values").text

    # run B = gamma: what gamma adds over alpha is green in its column
    Select(driver.find_element(By.ID, "rm-b")).select_by_visible_text("gamma")
    columns = driver.find_element(By.ID, "rm-view").find_elements(By.CLASS_NAME, "rm-col")
    new_in_gamma = {
        li.find_element(By.TAG_NAME, "code").text
        for li in columns[1].find_elements(By.CSS_SELECTOR, "ol > li.rm-new")
    }
    assert new_in_gamma == set(runs["gamma"]["q12"][:10]) - set(runs["alpha"]["q12"][:10])

    # the hostile query id is shown as text
    box.clear()
    box.send_keys("hostile")
    row = next(
        r for r in driver.find_elements(By.CSS_SELECTOR, "#rm-queries tbody tr") if r.is_displayed()
    )
    assert row.find_elements(By.TAG_NAME, "td")[0].text == "<b>x</b>"
    row.click()
    assert "</script><script>alert(1)</script>" in driver.find_element(By.ID, "rm-view").text


def test_in_a_real_browser_with_scripts_off(tmp_path: Path, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    path, _ = _report(tmp_path)
    driver = browser(scripts=False)
    driver.get(path.as_uri())
    rows = driver.find_elements(By.CSS_SELECTOR, "#rm-queries tbody tr")
    assert len(rows) == 31 and all(r.is_displayed() for r in rows[:3])
    assert "Scripts are off" in driver.find_element(By.TAG_NAME, "body").text
    assert driver.find_element(By.ID, "rm-explorer").get_attribute("data-ready") is None


def test_missed_evidence_reads_the_threshold_in_force(tmp_path: Path) -> None:
    """The views' "missed evidence" is judged by the comparison's own relevance threshold
    (0 included), or grade 4 when a RAG set metric was compared."""
    qrels = {"q": {"a": 0, "b": 2}}
    runs = {"x": {"q": ["c"]}, "y": {"q": ["a"]}}

    def relevant(**options: Any) -> int:
        comparison = rm.compare(qrels, runs, ["map"], n_permutations=10, **options)
        page = write_report(comparison, tmp_path / "r.html", plots=False).read_text()
        data = json.loads(re.search(r"id='rm-data'>(.*?)</script>", page, re.S).group(1))  # type: ignore[union-attr]
        return int(data["relevant"])

    assert relevant() == 1 and relevant(relevance_threshold=0) == 0
    assert relevant(relevance_threshold=2) == 2


def test_the_views_data_is_each_query_as_a_walk_over_the_runs_gives_it(tmp_path: Path) -> None:
    """The views' data, made a column at a time, read back query by query: each run's top
    k (a run read from TREC keeps its ids as bytes; one run lacks queries), the grades
    and each value, against the runs and results themselves."""
    rng = random.Random(8)
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(300)]
    qrels = {f"q{i}": {d: rng.randint(0, 3) for d in rng.sample(ids, 5)} for i in range(40)}
    qrels["empty-judged"] = {}
    bm25 = rm.Run.from_dict(
        {q: {d: float(rng.randint(0, 4)) for d in rng.sample(ids, 25)} for q in qrels}
    )  # ties, broken by doc id
    bm25.to_trec(tmp_path / "bm25.txt")
    from_file = rm.Run.from_trec(tmp_path / "bm25.txt")
    partial = rm.Run.from_lists({q: rng.sample(ids, 7) for q in list(qrels)[::3]})
    runs = {"file": from_file, "partial": partial}
    comparison = rm.compare(
        {q: g for q, g in qrels.items() if g}, runs, ["ndcg@5", "recall@10"],
        n_permutations=50, n_bootstrap=50, missing="skip",
    )  # fmt: skip
    page = write_report(comparison, tmp_path / "r.html", plots=False, explorer_k=6).read_text()
    data = json.loads(re.search(r"id='rm-data'>(.*?)</script>", page, re.S).group(1))  # type: ignore[union-attr]
    docs = data["docs"]
    assert len(set(docs)) == len(docs)
    first = comparison.results["file"]
    assert data["ids"] == list(first.query_ids)
    for query_id, view in zip(data["ids"], data["q"], strict=True):
        for r, (name, run) in enumerate(runs.items()):
            top = [docs[i] for i in view["t"][r]]
            assert top == (list(run[query_id][:6]) if query_id in run else []), (name, query_id)
            result = comparison.results[name]
            for m, metric in enumerate(comparison.metrics):
                value = result.per_query.get(query_id, {}).get(metric)
                expected = None if value is None else round(value, 6)
                assert view["v"][r][m] == expected, (name, query_id, metric)
        assert {docs[i]: g for i, g in view["g"]} == qrels[query_id]
