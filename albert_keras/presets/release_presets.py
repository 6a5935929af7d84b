"""Google's released ALBERT checkpoints, by name, and where other hubs keep theirs."""

# The official tarballs, as linked from the google-research/albert README (each holds
# `albert_config.json`, `model.ckpt-best.*` and `30k-clean.model`). The README publishes no
# checksums, so `md5` is None: the size and SHA-256 of the first download are recorded in the
# cache and every later use is checked against them (trust on first use).
_BUCKET = "https://storage.googleapis.com/albert_models"
RELEASES = {
    f"albert_{size}_{version}": {
        "url": f"{_BUCKET}/albert_{size}_{version}.tar.gz",
        "md5": None,
        "source": "tf1",
    }
    for version in ("v1", "v2")
    for size in ("base", "large", "xlarge", "xxlarge")
}

# `hf://ORG/NAME` downloads these files of the repository's main branch (safetensors only:
# pickled PyTorch weights are refused by the converter, see `read_hf_folder`).
HF_BASE_URL = "https://huggingface.co"
HF_FILES = ("config.json", "model.safetensors", "spiece.model")
