"""The learner copies of B01–B05 and V01–V04, filled in by hand as a learner would, run top to bottom in a
fresh kernel: every check says correct, nothing else is printed, and the progress file records it all.

By hand means: every intermediate rounded to the decimals the page asks for, the next part computed from
those (the weights from the rounded scores, the output from the learner's own rounded weights).
"""
import json
import re
import os
from pathlib import Path

import jupytext
import nbclient
import numpy as np
import pytest

from attn.grading import get_item, learner
from attn.grading import progress_file as pf
from routes import by_hand

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"B01": "b01-three-tokens", "B02": "b02-temperature", "B03": "b03-causal-mask", "B04": "b04-cross-attention",
         "B05": "b05-variance", "V01": "v01-three-tokens", "V02": "v02-temperature", "V03": "v03-causal-mask",
         "V04": "v04-cross-attention"}
SEED = 0  # the seed the variant pages start with

# how a learner writes a part computed from their own earlier answers, in the notebook
FROM_OWN = {"output": "np.round(np.array(weights) @ V, 2)",
            "var_scaled": "var_raw / d_k",
            "simulated": ("np.var((np.random.default_rng(1).normal(0, np.sqrt(var_q), (50_000, d_k)) * "
                          "np.random.default_rng(2).normal(0, np.sqrt(var_k), (50_000, d_k))).sum(axis=1))")}


def _literal(value) -> str:
    arr = np.asarray(value)
    if arr.dtype == bool:
        return repr(arr.tolist())
    return repr(np.round(arr.astype(float), 4).tolist())


def _filled(item_id: str) -> str:
    it = get_item(item_id)
    hand = by_hand(it, SEED if it.seeded else None)
    text = learner.copy_path(ROOT / "exercises" / f"{PAGES[item_id]}.md", ROOT).read_text(encoding="utf-8")
    nb = jupytext.reads(text, fmt="md:myst")
    filled = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for name in it.part_names:
            if cell.source.startswith(f"{name} = ..."):
                if item_id.startswith("V") and name == "output" or name in FROM_OWN and not item_id.startswith("V"):
                    cell.source = f"{name} = {FROM_OWN.get(name, _literal(hand[name]))}"
                else:
                    cell.source = f"{name} = {_literal(hand[name])}"
                filled.add(name)
        if "seed = " in cell.source and it.seeded:
            assert f"seed = {SEED}" in cell.source
    assert filled == set(it.part_names), (item_id, filled)
    return jupytext.writes(nb, fmt="ipynb")


@pytest.mark.parametrize("item_id", list(PAGES))
def test_a_filled_in_learner_copy_runs_clean_and_every_check_is_correct(item_id, tmp_path):
    import nbformat

    nb = nbformat.reads(_filled(item_id), as_version=4)
    env_before = os.environ.get("ATTN_PROGRESS")
    os.environ.pop("ATTN_PROGRESS", None)  # the kernel inherits the environment: let the copy record
    try:
        nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        if env_before is not None:
            os.environ["ATTN_PROGRESS"] = env_before
    verdicts = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            assert out.output_type != "stream" or "Progress" in out.text, (cell.source, out)  # no warnings, no noise
            assert out.output_type != "error", out
            text = out.get("data", {}).get("text/plain", "")
            if "check(" in cell.source:
                verdicts.append(text)
    assert verdicts and all(v.startswith("✓") for v in verdicts), verdicts
    data = json.loads((tmp_path / pf.FILENAME).read_text())
    parts = data["items"][item_id]["parts"]
    assert {k: v["status"] for k, v in parts.items()} == {n: "correct" for n in get_item(item_id).part_names}


def test_learner_copies_link_to_files_that_exist_and_keep_no_book_roles():
    for page in learner.pages(ROOT):
        copy = learner.copy_path(page, ROOT)
        text = copy.read_text(encoding="utf-8")
        assert "{ref}`" not in text and "{doc}`" not in text and "{prf:ref}`" not in text, copy.name
        for target in re.findall(r"\]\(([^)#]+\.md)(?:#[^)]*)?\)", text):
            assert (copy.parent / target).exists(), (copy.name, target)
