"""A synthetic matching task in SQuAD v1.1 JSON: "what word follows X?" over 50 random words.

python docs/runs/squad_copy_task.py OUT.json NUM_QUESTIONS SEED [WORDS_FILE]

The least a reading model must do: find the question's word in the passage and point next to
it. Each context is 50 distinct words drawn from WORDS_FILE's lower-cased alphabetic words of 3-8
letters (default: the tiny run's training contexts); the answer is the word after the one asked
about (chance: 1 in 49). docs/squad.md uses it to ask whether the tiny backbone can learn
question-passage matching at all within the run's budget.
"""

import json
import random
import sys


def main(out, num_questions, seed, words_file="/work/runs/squad128/data/train-contexts.txt"):
    rng = random.Random(int(seed))
    with open(words_file) as f:
        vocabulary = sorted(
            {w for w in f.read().lower().split() if w.isalpha() and 3 <= len(w) <= 8}
        )
    data = []
    for i in range(int(num_questions)):
        words = rng.sample(vocabulary, 50)
        j = rng.randrange(49)
        context = " ".join(words)
        start = len(" ".join(words[: j + 1])) + 1
        question = {
            "id": f"copy-{i}",
            "question": f"what word follows {words[j]}?",
            "answers": [{"text": words[j + 1], "answer_start": start}],
        }
        data.append({"title": str(i), "paragraphs": [{"context": context, "qas": [question]}]})
    with open(out, "w") as f:
        json.dump({"version": "1.1", "data": data}, f)


if __name__ == "__main__":
    main(*sys.argv[1:])
