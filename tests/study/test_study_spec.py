"""Study specs: the built-ins, files, overrides, and one clear line for each bad spec."""

import json

import pytest

from albert_keras.study import load_spec
from albert_keras.study.study_spec import BASELINE
from albert_keras_cli import main as cli
from albert_keras_cli.config_flags import parse_config_flags


def test_builtin_tables_have_the_papers_rows_and_a_baseline():
    table5 = load_spec("table5")
    assert [c.name for c in table5.cells] == ["None", "NSP", "SOP", BASELINE]
    assert [c.sentence_objective for c in table5.cells[:3]] == ["none", "nsp", "sop"]
    assert [c.pretrain for c in table5.cells] == [True, True, True, False]
    table4 = load_spec("table4")
    assert [table4.backbone_config(c)["sharing"] for c in table4.cells[:4]] == [
        "all",
        "attention",
        "ffn",
        "none",
    ]
    table3 = load_spec("table3", {"baseline": False})
    assert [(c.backbone["embedding_dim"], c.backbone["sharing"]) for c in table3.cells] == [
        (64, "none"), (128, "none"), (256, "none"), (64, "all"), (128, "all"), (256, "all")
    ]  # fmt: skip
    assert len({c.folder for c in table3.cells}) == 6


def test_overrides_reach_the_budget_and_the_backbone():
    items = ["steps=50", "seeds=[4,5]", "backbone.hidden_dim=64", "tasks=[]", "corpus=books/*.txt"]
    spec = load_spec("table5", parse_config_flags(items))
    assert spec.settings["steps"] == 50
    assert spec.settings["seeds"] == [4, 5]
    assert spec.settings["tasks"] == []
    assert spec.settings["corpus"] == "books/*.txt"  # not JSON: kept as the bare string
    assert spec.backbone_config(spec.cells[0])["hidden_dim"] == 64
    assert spec.backbone_config(spec.cells[0])["num_layers"] == 4  # the default kept


def test_yaml_and_json_files(tmp_path):
    (tmp_path / "grid.yaml").write_text(
        "name: mine\nsteps: 20\nbaseline: false\nbackbone: {num_layers: 2}\n"
        "cells:\n  - {name: a, sentence_objective: nsp}\n"
        "  - {name: b, backbone: {sharing: ffn}}\n"
    )
    spec = load_spec(str(tmp_path / "grid.yaml"))
    assert [c.name for c in spec.cells] == ["a", "b"]
    assert spec.cells[1].sentence_objective == "sop"
    assert spec.backbone_config(spec.cells[1]) == {
        **spec.settings["backbone"],
        "num_layers": 2,
        "sharing": "ffn",
    }
    assert [spec.precision(c) for c in spec.cells] == ["auto", "auto"]  # the study's default
    (tmp_path / "grid.json").write_text(json.dumps({"cells": [{"name": "x"}], "seeds": [7]}))
    spec = load_spec(str(tmp_path / "grid.json"))
    assert [c.name for c in spec.cells] == ["x", BASELINE]


def test_a_cell_may_train_in_its_own_precision():
    spec = load_spec(
        {"cells": [{"name": "f32", "mixed_precision": "float32"}, {"name": "study"}]},
        {"mixed_precision": "mixed_bfloat16"},
    )
    assert [spec.precision(c) for c in spec.cells] == [
        "float32",
        "mixed_bfloat16",
        "mixed_bfloat16",
    ]
    again = load_spec(spec.to_dict())
    assert [again.precision(c) for c in again.cells] == [spec.precision(c) for c in spec.cells]


@pytest.mark.parametrize(
    "spec, overrides, message",
    [
        ({"cells": [{"name": "a"}], "stepz": 3}, {}, "unknown key(s) stepz"),
        ({"cells": [{"name": "a", "sentence_objective": "xyz"}]}, {}, "sentence_objective='xyz'"),
        ({"cells": [{"name": "a", "backbone": {"sharing": "most"}}]}, {}, "sharing='most'"),
        ({"cells": [{"name": "a", "backbone": {"hidden": 3}}]}, {}, "backbone hidden: not a"),
        ({"cells": [{"name": "a"}, {"name": "a"}]}, {}, "cell name(s) used twice: a"),
        ({"cells": [{"name": "a", "depth": 2}]}, {}, "unknown key(s) depth"),
        ({"cells": [{"sentence_objective": "sop"}]}, {}, "cells[0] must be a mapping with a name"),
        ({"cells": [], "baseline": False}, {}, "no cells"),
        ("table5", {"steps": 0}, "steps=0 must be a positive integer"),
        ("table5", {"seeds": []}, "seeds=[] must be a list"),
        ("table5", {"seeds": [1, 1]}, "must be a list of distinct integers"),
        ("table5", {"tasks": ["SST2"]}, "tasks SST2: not a GLUE task"),
        ("table5", {"learning_rate": -1}, "learning_rate=-1 must be a positive number"),
        ("table5", {"preset": "albert_huge"}, "preset 'albert_huge' is unknown"),
        ("table5", {"warp": 9}, "--config warp: not a study key"),
        ("table5", {"mixed_precision": "bf16"}, "cell None: mixed_precision='bf16'; choose"),
        ({"cells": [{"name": "a", "mixed_precision": "fp8"}]}, {}, "mixed_precision='fp8'"),
    ],
)
def test_bad_specs_raise_one_line(spec, overrides, message):
    with pytest.raises(ValueError) as error:
        load_spec(spec, overrides)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_bad_files_name_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"steps": 10,\n "cells": [}\n')
    with pytest.raises(ValueError, match=r"spec .*bad.json: line 2: not JSON"):
        load_spec(str(bad))
    with pytest.raises(FileNotFoundError, match="built-in specs: table3, table4, table5"):
        load_spec(str(tmp_path / "table6"))
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    with pytest.raises(ValueError, match="must be a mapping of keys to values, got list"):
        load_spec(str(tmp_path / "list.yaml"))


def test_cli_bad_spec_exits_2_with_one_line(tmp_path, capsys):
    code = cli.main(["study", "table5", "--output_dir", str(tmp_path), "--config", "steps=-5"])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["albert-keras study: error: spec table5: steps=-5 must be a positive integer"]
    assert not (tmp_path / "study.json").exists()
    code = cli.main(["study", "table5", "--output_dir", str(tmp_path), "--config", "novalue"])
    assert code == 2
    assert "--config 'novalue' is not KEY=VALUE" in capsys.readouterr().err
