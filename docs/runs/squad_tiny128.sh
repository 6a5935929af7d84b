#!/usr/bin/env bash
# The tiny SQuAD run of docs/squad.md ("A tiny run at 128 positions"), from the repository root:
#   bash docs/runs/squad_tiny128.sh [OUT] [STAGE...]     (stages: data vocab records pretrain
#                                                         finetune cloze copy longer; default all, in that order)
# OUT defaults to /work/runs/squad128; PYTHON to python. Data is read from ../shared/data.
set -euo pipefail
OUT=${1:-/work/runs/squad128}; shift || true
STAGES=${*:-data vocab records pretrain finetune cloze copy longer}
PY=${PYTHON:-python}
D=../shared/data G=../shared/data/corpus/gutenberg SPM=$OUT/vocab/books8k.model
BOOKS="$G/1342-0.txt,$G/145.txt,$G/2600-0.txt,$G/2701-0.txt,$G/98-0.txt"  # 1661 held out
mkdir -p "$OUT"
for stage in $STAGES; do case $stage in
data)  # by article, every 4th is dev; v2.0 and v1.1 (answerable only) files; train contexts
  mkdir -p "$OUT/data"
  $PY docs/runs/squad_split.py $D/squad/squad-v2.0-dev-part.json "$OUT/data" ;;
vocab)  # the precision study's 8k lower-cased books vocabulary (docs/precision/README.md)
  $PY -m pipelines.train_vocab --input "$BOOKS" --vocab_size 8000 --lower_case \
    --output_prefix "$OUT/vocab/books8k" ;;
records)  # 128-piece SOP records: books x5, the SQuAD *training* contexts x40 (task-adaptive), held-out book x1
  $PY -m pipelines.pretraining_data --input "$BOOKS" --spm_model $SPM --output_dir "$OUT/records/books" \
    --max_seq_length 128 --dupe_factor 5 --num_shards 4 --quiet
  $PY -m pipelines.pretraining_data --input "$OUT/data/train-contexts.txt" --spm_model $SPM \
    --output_dir "$OUT/records/squad" --max_seq_length 128 --dupe_factor 40 --num_shards 2 --quiet
  $PY -m pipelines.pretraining_data --input "$G/1661.txt" --spm_model $SPM \
    --output_dir "$OUT/records/heldout" --max_seq_length 128 --dupe_factor 1 --num_shards 1 --quiet ;;
pretrain)  # the study's tiny config (L4 H128 E128 I512, 2 heads, all shared) with 128 positions
  $PY -m albert_keras_cli pretrain --records "$OUT/records/[bs]*/*.tfrecord" \
    --eval_records "$OUT/records/heldout/*.tfrecord" --eval_steps 40 --output_dir "$OUT/pretrain" \
    --preset albert_base --config num_layers=4 --config hidden_dim=128 --config num_heads=2 \
    --config intermediate_dim=512 --config embedding_dim=128 --config max_sequence_length=128 \
    --sentence_objective sop --batch_size 32 --max_steps 4000 --learning_rate 0.01 \
    --warmup_steps 100 --checkpoint_every 500 --mixed_precision auto --spm_model $SPM --seed 1 ;;
finetune)  # every run of the doc's tables: batch 32, 10% warmup, seed 1, float32
  P=$OUT/pretrain/backbone.keras RND=$OUT/random-backbone.keras FT=$OUT/finetune
  mkdir -p "$FT"
  # the random-init backbone: the pretrained one's config, fresh weights (seed 1)
  $PY -c "import keras, albert_keras as ak; b = keras.saving.load_model('$P')
keras.utils.set_random_seed(1); ak.AlbertBackbone.from_config(b.get_config()).save('$RND')"
  COMMON="--spm_model $SPM --max_seq_length 128 --doc_stride 64 --max_query_length 32
    --batch_size 32 --seed 1 --strategy cpu --mixed_precision float32"
  V1="--version 1.1 --train_file $OUT/data/train-v1.1.json --predict_file $OUT/data/dev-v1.1.json $COMMON"
  V2="--version 2.0 --train_file $OUT/data/train-v2.0.json --predict_file $OUT/data/dev-v2.0.json $COMMON"
  run() { local name=$1; shift; local t0=$SECONDS
    $PY -m albert_keras_cli finetune-squad "$@" --output_dir "$FT/$name" > "$FT/$name.log" 2>&1
    echo "$name: $((SECONDS - t0)) s" | tee -a "$FT/wall.txt"; }
  run v1-pretrained-untrained $V1 --model $P --epochs 0
  run v1-random-untrained $V1 --model $RND --epochs 0
  run v1-pretrained-8ep-lr5e-4 $V1 --model $P --epochs 8 --learning_rate 5e-4
  run v1-pretrained-3ep-lr3e-4 $V1 --model $P --epochs 3 --learning_rate 3e-4
  run v1-pretrained-2ep-lr1e-3 $V1 --model $P --epochs 2 --learning_rate 1e-3
  run v1-random-3ep-lr3e-4 $V1 --model $RND --epochs 3 --learning_rate 3e-4
  run v1-random-2ep-lr1e-3 $V1 --model $RND --epochs 2 --learning_rate 1e-3
  run v1-pretrained-untrained-seed2 $V1 --model $P --epochs 0 --seed 2
  run v1-pretrained-3ep-lr3e-4-seed2 $V1 --model $P --epochs 3 --learning_rate 3e-4 --seed 2
  run v1-random-3ep-lr3e-4-seed2 $V1 --model $RND --epochs 3 --learning_rate 3e-4 --seed 2
  run v2-pretrained-untrained $V2 --model $P --epochs 0
  run v2-pretrained-3ep-lr3e-4 $V2 --model $P --epochs 3 --learning_rate 3e-4
  run v2-random-3ep-lr3e-4 $V2 --model $RND --epochs 3 --learning_rate 3e-4
  # the tables, paired standard errors, the 8-epoch model on its own training questions
  $PY docs/runs/squad_table128.py $(for r in v1-pretrained-untrained v1-random-untrained \
    v1-pretrained-8ep-lr5e-4 v1-pretrained-3ep-lr3e-4 v1-pretrained-2ep-lr1e-3 v1-random-3ep-lr3e-4 \
    v1-random-2ep-lr1e-3 v2-pretrained-untrained v2-pretrained-3ep-lr3e-4 v2-random-3ep-lr3e-4; do
    echo "$r=$FT/$r"; done)
  $PY docs/runs/squad_se.py "$OUT/data/dev-v1.1.json" $(for r in v1-pretrained-untrained \
    v1-random-untrained v1-pretrained-8ep-lr5e-4 v1-pretrained-3ep-lr3e-4 v1-pretrained-2ep-lr1e-3 \
    v1-random-3ep-lr3e-4 v1-random-2ep-lr1e-3; do echo "$r=$FT/$r"; done)
  $PY docs/runs/squad_se.py "$OUT/data/dev-v1.1.json" $(for r in v1-pretrained-untrained-seed2 \
    v1-pretrained-3ep-lr3e-4-seed2 v1-random-3ep-lr3e-4-seed2; do echo "$r=$FT/$r"; done)
  $PY docs/runs/squad_by_type.py "$OUT/data/dev-v1.1.json" $(for r in v1-pretrained-untrained \
    v1-random-untrained v1-pretrained-3ep-lr3e-4 v1-random-3ep-lr3e-4 v1-pretrained-untrained-seed2 \
    v1-pretrained-3ep-lr3e-4-seed2 v1-random-3ep-lr3e-4-seed2; do echo "$FT/$r"; done)
  $PY docs/runs/squad_auc.py "$OUT/data/dev-v2.0.json" "$FT/v2-pretrained-untrained" \
    "$FT/v2-pretrained-3ep-lr3e-4" "$FT/v2-random-3ep-lr3e-4"
  $PY docs/runs/squad_score_model.py "$FT/v1-pretrained-8ep-lr5e-4" $SPM "$OUT/data/train-v1.1.json" ;;
cloze)  # span-selection pre-training on cloze questions from the books and the training contexts
  C=$OUT/cloze P=$OUT/pretrain/backbone.keras
  mkdir -p "$C"
  COMMON="--spm_model $SPM --max_seq_length 128 --doc_stride 64 --max_query_length 32
    --batch_size 32 --seed 1 --strategy cpu --mixed_precision float32"
  V1="--version 1.1 --predict_file $OUT/data/dev-v1.1.json $COMMON"
  TEXT="$OUT/data/train-contexts.txt,$G/1342-0.txt=3000,$G/145.txt=3000,$G/2600-0.txt=3000,$G/2701-0.txt=3000,$G/98-0.txt=3000"
  $PY docs/runs/squad_cloze.py "$C/cloze-v1.1.json" --text "$TEXT" --per_sentence 2 --max_words 200
  $PY docs/runs/squad_cloze.py "$C/cloze2-v1.1.json" --text "$TEXT" --per_sentence 2 --max_words 120 --drop 0.1
  $PY docs/runs/squad_cloze.py "$C/heldout-cloze.json" --text "$G/1661.txt=500" --max_words 120 --drop 0.1 --seed 2
  run() { local name=$1; shift; local t0=$SECONDS
    $PY -m albert_keras_cli finetune-squad "$@" --output_dir "$C/$name" > "$C/$name.log" 2>&1
    echo "$name: $((SECONDS - t0)) s" | tee -a "$C/wall.txt"; }
  run c-pre-1ep $V1 --train_file "$C/cloze-v1.1.json" --model $P --epochs 1 --learning_rate 3e-4
  run c-pre-1ep-then-3ep $V1 --train_file "$OUT/data/train-v1.1.json" --model "$C/c-pre-1ep/model.keras" --epochs 3 --learning_rate 3e-4
  run c2-pre-3ep-lr1e-3 $V1 --train_file "$C/cloze2-v1.1.json" --model $P --epochs 3 --learning_rate 1e-3
  run c2-pre-3ep-lr1e-3-then-3ep $V1 --train_file "$OUT/data/train-v1.1.json" --model "$C/c2-pre-3ep-lr1e-3/model.keras" --epochs 3 --learning_rate 3e-4
  for r in c-pre-1ep c2-pre-3ep-lr1e-3; do
    $PY docs/runs/squad_score_model.py "$C/$r" $SPM "$C/heldout-cloze.json"; done
  $PY docs/runs/squad_se.py "$OUT/data/dev-v1.1.json" untrained=$OUT/finetune/v1-pretrained-untrained \
    ft3=$OUT/finetune/v1-pretrained-3ep-lr3e-4 $(for r in c-pre-1ep c-pre-1ep-then-3ep \
    c2-pre-3ep-lr1e-3 c2-pre-3ep-lr1e-3-then-3ep; do echo "$r=$C/$r"; done) ;;
copy)  # the synthetic "what word follows X?" task: can the tiny backbone learn to match at all?
  K=$OUT/copy
  mkdir -p "$K"
  $PY docs/runs/squad_copy_task.py "$K/train.json" 3000 1 "$OUT/data/train-contexts.txt"
  $PY docs/runs/squad_copy_task.py "$K/train15k.json" 15000 3 "$OUT/data/train-contexts.txt"
  $PY docs/runs/squad_copy_task.py "$K/dev.json" 300 2 "$OUT/data/train-contexts.txt"
  COPY="--version 1.1 --predict_file $K/dev.json --spm_model $SPM --max_seq_length 128 --doc_stride 64
    --max_query_length 32 --batch_size 32 --seed 1 --strategy cpu --mixed_precision float32"
  $PY -m albert_keras_cli finetune-squad $COPY --train_file "$K/train.json" --model $OUT/random-backbone.keras \
    --epochs 5 --learning_rate 1e-3 --output_dir "$K/random-5ep" > "$K/random-5ep.log" 2>&1
  $PY -m albert_keras_cli finetune-squad $COPY --train_file "$K/train.json" --model $OUT/pretrain/backbone.keras \
    --epochs 5 --learning_rate 1e-3 --output_dir "$K/pre-5ep" > "$K/pre-5ep.log" 2>&1
  $PY -m albert_keras_cli finetune-squad $COPY --train_file "$K/train15k.json" --model $OUT/pretrain/backbone.keras \
    --epochs 2 --learning_rate 3e-4 --output_dir "$K/pre15k-2ep" > "$K/pre15k-2ep.log" 2>&1
  grep -h "^SQuAD" "$K"/*.log ;;
longer)  # 8,000 more pretraining steps from the 4,000-step model (lr 5e-3), then v1.1 as above
  $PY -m albert_keras_cli pretrain --records "$OUT/records/[bs]*/*.tfrecord" \
    --eval_records "$OUT/records/heldout/*.tfrecord" --eval_steps 40 --output_dir "$OUT/pretrain12k" \
    --init_from "$OUT/pretrain/model.keras" --sentence_objective sop --batch_size 32 --max_steps 8000 \
    --learning_rate 0.005 --warmup_steps 100 --checkpoint_every 1000 --mixed_precision auto \
    --spm_model $SPM --seed 2
  P12=$OUT/pretrain12k/backbone.keras FT=$OUT/finetune
  V1="--version 1.1 --train_file $OUT/data/train-v1.1.json --predict_file $OUT/data/dev-v1.1.json
    --spm_model $SPM --max_seq_length 128 --doc_stride 64 --max_query_length 32 --batch_size 32
    --seed 1 --strategy cpu --mixed_precision float32"
  $PY -m albert_keras_cli finetune-squad $V1 --model $P12 --epochs 0 --output_dir "$FT/v1-pre12k-untrained"
  $PY -m albert_keras_cli finetune-squad $V1 --model $P12 --epochs 3 --learning_rate 3e-4 \
    --output_dir "$FT/v1-pre12k-3ep-lr3e-4"
  $PY docs/runs/squad_se.py "$OUT/data/dev-v1.1.json" untrained=$FT/v1-pre12k-untrained \
    ft3=$FT/v1-pre12k-3ep-lr3e-4 ;;
*) echo "unknown stage $stage" >&2; exit 2 ;;
esac; done
