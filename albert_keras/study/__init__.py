"""Studies: the paper's ablations (Tables 3, 4, 5) run end to end.

A job-level package: it uses `training`, `glue` and `pipelines`; nothing below imports it.

    albert-keras study table5 --output_dir out/table5 --corpus 'books/*.txt' \\
        --heldout books/1661.txt --spm_model spm.model --glue_dir glue_data --config steps=2000

`run_study` is the same in Python; `load_spec` checks a spec (built-in, YAML / JSON, dict).
"""

from albert_keras.study.run_study import run_study
from albert_keras.study.study_spec import BUILTIN_CELLS, Cell, StudySpec, load_spec

__all__ = ["BUILTIN_CELLS", "Cell", "StudySpec", "load_spec", "run_study"]
