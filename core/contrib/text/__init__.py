"""``mx.contrib.text``: token counting (``utils``), vocabularies (``vocab``) and token
embeddings (``embedding``), as MXNet 1.9.1's. Pre-trained embeddings (GloVe, fastText)
download their files once into ``$MXNET_HOME/embeddings``; without network access they
say where to put the file by hand. ``CustomEmbedding`` and ``CompositeEmbedding`` need
no network."""
from . import embedding, utils, vocab

__all__ = ["utils", "vocab", "embedding"]
