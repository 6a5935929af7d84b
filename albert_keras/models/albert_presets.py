"""The architecture presets are the catalogue's (`albert_keras_contracts.catalogue`: the
official ALBERT v2 configs, the paper's BERT baselines, a tiny ALBERT, in
`albert_keras_contracts.architecture_presets`, and any a user registers); imported here as
before (`AlbertBackbone.presets` is this same dict)."""

from albert_keras_contracts.catalogue import ARCHITECTURE_PRESETS as BACKBONE_PRESETS

__all__ = ["BACKBONE_PRESETS"]
