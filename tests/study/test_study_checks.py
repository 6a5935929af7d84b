"""The paper's findings a study report checks: which cells they are checked on, and when a
downstream gap counts."""

from albert_keras.study.study_checks import paper_checks
from albert_keras.study.study_statistics import seed_stats

CHANCE = {"NSP": 58.6, "SOP": 50.5}


def row(cell, objective, *, sop=(57.0, 57.0), nsp=(51.0, 51.0), avg=(43.0, 43.0), pretrained=True):
    columns = {"SOP": seed_stats(list(sop)), "NSP": seed_stats(list(nsp))}
    columns["Avg"] = seed_stats(list(avg))
    return {"cell": cell, "sentence_objective": objective, "pretrained": pretrained,
            "seeds": [1, 2], "columns": columns}  # fmt: skip


def test_table5_checks_each_sentence_head_on_its_own_cell():
    rows = [
        row("None", "none", avg=(44.0, 44.2)),
        row("NSP", "nsp", sop=(51.0, 52.0), nsp=(80.0, 82.0), avg=(43.0, 43.4)),
        row("SOP", "sop", sop=(60.0, 62.0), nsp=(50.0, 51.0), avg=(45.0, 45.4)),
        row("no pretraining", "sop", sop=(50.0, 50.0), avg=(42.0, 42.2), pretrained=False),
    ]
    checks = {c["claim"]: c for c in paper_checks(rows, CHANCE)}
    assert checks["SOP-trained model: SOP accuracy well above chance (50.5)"]["measured"] == (
        "61.0 ± 1.4"
    )
    assert checks["SOP-trained model: NSP accuracy above chance (58.6)"]["holds"] is False
    assert checks["NSP-trained model: SOP accuracy near chance (50.5)"]["measured"] == "51.5 ± 0.7"
    assert checks["NSP-trained model: NSP accuracy well above chance (58.6)"]["holds"] is True
    downstream = [c for c in checks.values() if "downstream" in c["claim"]]
    assert [c["paper"] for c in downstream] == [
        "79.0 (no baseline in the paper)",
        "79.2 (no baseline in the paper)",
        "80.1 (no baseline in the paper)",
    ]
    assert [c["holds"] for c in downstream] == [True, True, True]
    assert len(checks) == 7


def test_a_grid_of_one_objective_checks_no_sentence_head_and_every_cell_downstream():
    # table3 / table4: every pretrained cell is SOP-trained; none of them is "the" SOP model.
    rows = [
        row("E=32", "sop", sop=(56.0, 57.0), avg=(42.5, 43.1)),
        row("E=128", "sop", sop=(57.0, 58.0), avg=(44.0, 45.0)),
        row("no-pretraining", "sop", avg=(42.0, 43.0), pretrained=False),
    ]
    checks = paper_checks(rows, CHANCE)
    assert [c["claim"] for c in checks] == [
        "E=32-pretrained above no-pretraining on the downstream average",
        "E=128-pretrained above no-pretraining on the downstream average",
    ]
    assert [c["paper"] for c in checks] == [None, None]
    # E=32: 42.8 against 42.5, a gap inside the seed spread (0.7): not a finding.
    assert [c["holds"] for c in checks] == [False, True]


def test_a_downstream_gap_inside_the_seed_spread_does_not_hold():
    # table4's not-shared cell at 5,000 steps: 42.8 ± 0.6 against 42.7 ± 1.7.
    rows = [
        row("NSP", "nsp", avg=(42.2, 43.4)),
        row("SOP", "sop", avg=(45.0, 45.0)),
        row("no pretraining", "sop", avg=(41.5, 43.9), pretrained=False),
    ]
    holds = {
        c["claim"]: c["holds"] for c in paper_checks(rows, CHANCE) if "downstream" in c["claim"]
    }
    assert holds == {
        "NSP-pretrained above no-pretraining on the downstream average": False,
        "SOP-pretrained above no-pretraining on the downstream average": True,
    }


def test_cells_not_fine_tuned_yet_are_not_checked_downstream():
    rows = [row("E=32", "sop"), row("no-pretraining", "sop", pretrained=False)]
    rows[0]["columns"]["Avg"] = seed_stats([])
    assert paper_checks(rows, CHANCE) == []
