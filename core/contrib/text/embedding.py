"""Token embeddings: a ``Vocabulary`` whose tokens carry vectors (MXNet 1.9.1's
``mx.contrib.text.embedding``).

``idx_to_vec`` is an NDArray with one row per indexed token; row 0 is the unknown
token's vector, read from the file when the file has that token, else made by
``init_unknown_vec``. The vectors come from a text file of lines
``token<delim>v1<delim>v2...`` (``CustomEmbedding``), from a published pre-trained file
fetched once into ``embedding_root`` (``GloVe``, ``FastText``; see ``_constants``), or
from other embeddings side by side (``CompositeEmbedding``).

Pre-trained embeddings live in a registry: ``register`` a ``_TokenEmbedding`` subclass,
``create`` one by its lower-cased class name, ``get_pretrained_file_names`` lists their
files.
"""
from __future__ import annotations

import logging
import os
import tarfile
import warnings
import zipfile
from typing import Any, Callable, Sequence

from ... import base
from ... import ndarray as nd
from . import _constants as C
from . import _registry as registry
from .vocab import Vocabulary

__all__ = ["register", "create", "get_pretrained_file_names", "GloVe", "FastText", "CustomEmbedding",
           "CompositeEmbedding"]

_DEFAULT_ROOT = os.path.join(base.data_dir(), "embeddings")


def register(embedding_cls: type) -> type:
    """Class decorator: make a ``_TokenEmbedding`` subclass available to ``create`` under its
    lower-cased class name.

    Examples
    --------
    >>> @mx.contrib.text.embedding.register
    ... class MyTextEmbed(mx.contrib.text.embedding._TokenEmbedding):
    ...     pretrained_file_name_sha1 = {'my_file.vec': '...'}
    >>> embed = mx.contrib.text.embedding.create('mytextembed')
    """
    return registry.get_register_func(_TokenEmbedding, "token embedding")(embedding_cls)


def create(embedding_name: str, **kwargs: Any) -> "_TokenEmbedding":
    """An instance of the registered embedding ``embedding_name`` (case-insensitive),
    e.g. ``create('glove', pretrained_file_name='glove.6B.50d.txt')``; ``kwargs`` go to its
    constructor."""
    return registry.get_create_func(_TokenEmbedding, "token embedding")(embedding_name, **kwargs)


def get_pretrained_file_names(embedding_name: str | None = None) -> Any:
    """The pre-trained file names ``embedding_name`` accepts (a list), or for
    ``None`` a dict of every registered embedding name to its list. KeyError for an
    unknown name."""
    table: dict[str, Any] = registry.get_registry(_TokenEmbedding)
    if embedding_name is None:
        return {name: list(cls.pretrained_file_name_sha1) for name, cls in table.items()}
    if embedding_name not in table:
        raise KeyError("Cannot find `embedding_name` %s. Use `get_pretrained_file_names(embedding_name=None).keys()`"
                       " to get all the valid embedding names." % embedding_name)
    return list(table[embedding_name].pretrained_file_name_sha1)


def _read_vectors(path: str, elem_delim: str, encoding: str, unknown_token: Any
                  ) -> tuple[list[Any], list[list[float]], list[float] | None]:
    """Tokens, their vectors and the unknown token's vector (None if absent) from an
    embedding file. A repeated token keeps its first vector; a line with one number is
    taken for a header (fastText's ``count dim``) and skipped; both with a warning."""
    tokens: list[Any] = []
    vectors: list[list[float]] = []
    unknown_vec: list[float] | None = None
    seen: set = set()
    with open(path, "r", encoding=encoding) as f:
        for line_num, line in enumerate(f, 1):
            elems = line.rstrip().split(elem_delim)
            assert len(elems) > 1, "At line %d of the pre-trained text embedding file: the data format of the " \
                                   "pre-trained token embedding file %s is unexpected." % (line_num, path)
            token, vec = elems[0], [float(x) for x in elems[1:]]
            if token == unknown_token and unknown_vec is None:
                unknown_vec = vec
                seen.add(token)
            elif token in seen:
                warnings.warn("At line %d of the pre-trained token embedding file: the embedding vector for token %s "
                              "has been loaded and a duplicate embedding for the  same token is seen and skipped."
                              % (line_num, token), stacklevel=3)
            elif len(vec) == 1:
                warnings.warn("At line %d of the pre-trained text embedding file: token %s with 1-dimensional vector "
                              "%s is likely a header and is skipped." % (line_num, token, vec), stacklevel=3)
            else:
                assert not vectors or len(vec) == len(vectors[0]), \
                    "At line %d of the pre-trained token embedding file: the dimension of token %s is %d but the " \
                    "dimension of previous tokens is %d. Dimensions of all the tokens must be the same." \
                    % (line_num, token, len(vec), len(vectors[0]))
                tokens.append(token)
                vectors.append(vec)
                seen.add(token)
    return tokens, vectors, unknown_vec


class _TokenEmbedding(Vocabulary):
    """Base class of token embeddings: a ``Vocabulary`` plus ``idx_to_vec`` and
    ``vec_len``.

    The tokens are either those of the loaded vectors (in file order after the unknown
    and reserved tokens) or, when a ``vocabulary`` is given, that vocabulary's, each
    with its vector from the file (the unknown vector when the file lacks it).

    A pre-trained subclass sets ``pretrained_file_name_sha1`` (file name -> SHA-1) and,
    when the files come packed, ``pretrained_archive_name_sha1``; it is downloaded from
    ``$MXNET_GLUON_REPO`` (default MXNet's S3 bucket) into
    ``<embedding_root>/<class name lower-cased>/``.
    """

    pretrained_file_name_sha1: dict[str, str] = {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._vec_len: int | None = None
        self._idx_to_vec: Any = None

    # -- pre-trained files ----------------------------------------------------------------
    @classmethod
    def _get_download_file_name(cls, pretrained_file_name: str) -> str:
        """The name of what to download for ``pretrained_file_name`` (itself unless packed)."""
        return pretrained_file_name

    @classmethod
    def _get_pretrained_file_url(cls, pretrained_file_name: str) -> str:
        repo_url = os.environ.get("MXNET_GLUON_REPO", C.APACHE_REPO_URL)
        return "{}gluon/embeddings/{}/{}".format(repo_url, cls.__name__.lower(),
                                                 cls._get_download_file_name(pretrained_file_name))

    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name: str) -> None:
        """KeyError, listing the valid names, unless ``pretrained_file_name`` is known."""
        if pretrained_file_name not in cls.pretrained_file_name_sha1:
            name = cls.__name__.lower()
            raise KeyError("Cannot find pretrained file %s for token embedding %s. Valid pretrained files for "
                           "embedding %s: %s" % (pretrained_file_name, name, name,
                                                 ", ".join(cls.pretrained_file_name_sha1)))

    @classmethod
    def _get_pretrained_file(cls, embedding_root: str, pretrained_file_name: str) -> str:
        """Path of ``pretrained_file_name`` under ``embedding_root``, downloaded (and
        unpacked) first unless a copy with the right SHA-1 is there already."""
        from ...gluon.utils import check_sha1, download
        embedding_dir = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower())
        path = os.path.join(embedding_dir, pretrained_file_name)
        file_sha1 = cls.pretrained_file_name_sha1[pretrained_file_name]
        if os.path.exists(path) and check_sha1(path, file_sha1):
            return path
        url = cls._get_pretrained_file_url(pretrained_file_name)
        archive = os.path.basename(url)
        archive_path = os.path.join(embedding_dir, archive)
        archive_sha1 = getattr(cls, "pretrained_archive_name_sha1", {}).get(archive, file_sha1)
        try:
            download(url, archive_path, sha1_hash=archive_sha1)
        except base.PlexnetError as e:
            raise base.PlexnetError(f"{cls.__name__}: cannot fetch the pre-trained file {pretrained_file_name} "
                                    f"({e}). Alternatively place the file itself at {path} "
                                    f"(SHA-1 {file_sha1}).") from e
        if archive.endswith(".zip"):
            with zipfile.ZipFile(archive_path, "r") as zf:
                zf.extractall(embedding_dir)
        elif archive.endswith(".gz"):
            with tarfile.open(archive_path, "r:gz") as tar:
                if hasattr(tarfile, "data_filter"):   # refuse paths and links out of the directory
                    tar.extractall(path=embedding_dir, filter="data")
                else:
                    tar.extractall(path=embedding_dir)
        return path

    # -- vectors ------------------------------------------------------------------------------
    def _load_embedding(self, pretrained_file_path: str, elem_delim: str, init_unknown_vec: Callable[..., Any],
                        encoding: str = "utf8") -> None:
        """Index the tokens of an embedding file after those already indexed and set
        ``idx_to_vec`` (row 0: the file's unknown-token vector, else ``init_unknown_vec``)."""
        path = os.path.expanduser(pretrained_file_path)
        if not os.path.isfile(path):
            raise ValueError("`pretrained_file_path` must be a valid path to the pre-trained token embedding file.")
        logging.info("Loading pre-trained token embedding vectors from %s", path)
        tokens, vectors, unknown_vec = _read_vectors(path, elem_delim, encoding, self.unknown_token)
        if not vectors:
            raise ValueError(f"{path}: no token embedding vectors in the file")
        for token in tokens:
            self._token_to_idx[token] = len(self._idx_to_token)
            self._idx_to_token.append(token)
        self._vec_len = len(vectors[0])
        # one row per loaded token after the unknown token's (row 0) -- as MXNet, the
        # reserved tokens' indices have no rows of their own
        self._idx_to_vec = nd.array([[0.0] * self._vec_len] + vectors)
        self._idx_to_vec[C.UNKNOWN_IDX] = init_unknown_vec(shape=self._vec_len) if unknown_vec is None \
            else nd.array(unknown_vec)

    def _index_tokens_from_vocabulary(self, vocabulary: Vocabulary) -> None:
        """Take over the tokens of ``vocabulary`` (copies of its tables)."""
        self._token_to_idx = vocabulary.token_to_idx.copy()
        self._idx_to_token = vocabulary.idx_to_token[:]
        self._unknown_token = vocabulary.unknown_token
        reserved = vocabulary.reserved_tokens
        self._reserved_tokens = None if reserved is None else reserved[:]

    def _set_idx_to_vec_by_embeddings(self, token_embeddings: Sequence["_TokenEmbedding"], vocab_len: int,
                                      vocab_idx_to_token: Sequence[Any]) -> None:
        """``idx_to_vec`` for the tokens ``vocab_idx_to_token``: the vectors of every
        embedding side by side; row 0 joins the embeddings' own unknown vectors."""
        blocks = []
        for embed in token_embeddings:
            rows = [C.UNKNOWN_IDX] + embed._lookup(vocab_idx_to_token[1:vocab_len])
            blocks.append(nd.Embedding(nd.array(rows), embed.idx_to_vec, embed.idx_to_vec.shape[0], embed.vec_len))
        self._vec_len = sum(int(block.shape[1]) for block in blocks)
        self._idx_to_vec = blocks[0] if len(blocks) == 1 else nd.concat(*blocks, dim=1)

    def _build_embedding_for_vocabulary(self, vocabulary: Vocabulary | None) -> None:
        """Re-index to ``vocabulary``'s tokens, keeping their loaded vectors (no-op for None)."""
        if vocabulary is None:
            return
        assert isinstance(vocabulary, Vocabulary), \
            "The argument `vocabulary` must be an instance of mxnet.contrib.text.vocab.Vocabulary."
        self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
        self._index_tokens_from_vocabulary(vocabulary)

    @property
    def vec_len(self) -> int | None:
        """Length of each token's vector."""
        return self._vec_len

    @property
    def idx_to_vec(self) -> Any:
        """NDArray ``(len(self), vec_len)``: row i is the vector of token i."""
        return self._idx_to_vec

    def _lookup(self, tokens: Sequence[Any], lower_case_backup: bool = False) -> list[int]:
        def index(token: Any) -> int:
            if token in self._token_to_idx or not lower_case_backup:
                return self._token_to_idx.get(token, C.UNKNOWN_IDX)
            return self._token_to_idx.get(token.lower(), C.UNKNOWN_IDX)
        return [index(t) for t in tokens]

    def get_vecs_by_tokens(self, tokens: Any, lower_case_backup: bool = False) -> Any:
        """Vector of a token (1-D NDArray) or of a list of tokens (2-D); unknown tokens get
        row 0. ``lower_case_backup``: a token not found as written is looked up lower-cased."""
        single = not isinstance(tokens, list)
        indices = self._lookup([tokens] if single else tokens, lower_case_backup)
        vecs = nd.Embedding(nd.array(indices), self.idx_to_vec, self.idx_to_vec.shape[0], self.idx_to_vec.shape[1])
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens: Any, new_vectors: Any) -> None:
        """Overwrite the vectors of indexed tokens: ``new_vectors`` is ``(len(tokens),
        vec_len)`` (1-D also for a single token). An unindexed token is a ValueError (name
        the unknown token itself to change row 0)."""
        assert self.idx_to_vec is not None, "The property `idx_to_vec` has not been properly set."
        if not isinstance(tokens, list) or len(tokens) == 1:
            assert isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) in (1, 2), \
                "`new_vectors` must be a 1-D or 2-D NDArray if `tokens` is a singleton."
            tokens = tokens if isinstance(tokens, list) else [tokens]
            if len(new_vectors.shape) == 1:
                new_vectors = nd.expand_dims(new_vectors, axis=0)
        else:
            assert isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) == 2, \
                "`new_vectors` must be a 2-D NDArray if `tokens` is a list of multiple strings."
        assert new_vectors.shape == (len(tokens), self.vec_len), \
            "The length of new_vectors must be equal to the number of tokens and the width of" \
            "new_vectors must be equal to the dimension of embeddings of the glossary."
        for token in tokens:
            if token not in self._token_to_idx:
                raise ValueError("Token %s is unknown. To update the embedding vector for an unknown token, please "
                                 "specify it explicitly as the `unknown_token` %s in `tokens`. This is to avoid "
                                 "unintended updates." % (token, self.idx_to_token[C.UNKNOWN_IDX]))
        self._idx_to_vec[nd.array([self._token_to_idx[t] for t in tokens])] = new_vectors


class _PretrainedEmbedding(_TokenEmbedding):
    """A published embedding: check the name, fetch the file, load it (space-separated)."""

    def __init__(self, pretrained_file_name: str, embedding_root: str, init_unknown_vec: Callable[..., Any],
                 vocabulary: Vocabulary | None, **kwargs: Any) -> None:
        self._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        self._load_embedding(self._get_pretrained_file(embedding_root, pretrained_file_name), " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


@register
class GloVe(_PretrainedEmbedding):
    """The GloVe word vectors (https://nlp.stanford.edu/projects/glove/; Pennington, Socher
    and Manning, 2014; vectors under the PDDL licence).

    Parameters
    ----------
    pretrained_file_name : str
        One of ``get_pretrained_file_names('glove')``.
    embedding_root : str
        Where files are kept (``$MXNET_HOME/embeddings``, ``~/.mxnet/embeddings``).
    init_unknown_vec : callable
        ``init_unknown_vec(shape=vec_len)`` makes the unknown token's vector.
    vocabulary : Vocabulary or None
        Index this vocabulary's tokens instead of all the file's.
    """

    # the names of the two MXNet tables are swapped: this one holds the archives
    pretrained_archive_name_sha1 = C.GLOVE_PRETRAINED_FILE_SHA1
    pretrained_file_name_sha1 = C.GLOVE_PRETRAINED_ARCHIVE_SHA1

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name: str) -> str:
        # glove.<corpus>.<dim>.txt ships in the archive glove.<corpus>...zip
        corpus = pretrained_file_name.split(".")[1]
        return next(a for a in cls.pretrained_archive_name_sha1 if a.split(".")[1] == corpus)

    def __init__(self, pretrained_file_name: str = "glove.840B.300d.txt", embedding_root: str = _DEFAULT_ROOT,
                 init_unknown_vec: Callable[..., Any] = nd.zeros, vocabulary: Vocabulary | None = None,
                 **kwargs: Any) -> None:
        super().__init__(pretrained_file_name, embedding_root, init_unknown_vec, vocabulary, **kwargs)


@register
class FastText(_PretrainedEmbedding):
    """The fastText word vectors (https://fasttext.cc/; Bojanowski et al. 2016, Joulin et
    al. 2016; ``wiki.multi.*``: Conneau et al. 2017; vectors under CC BY-SA 3.0).

    Parameters are those of ``GloVe``; ``pretrained_file_name`` is one of
    ``get_pretrained_file_names('fasttext')``.
    """

    pretrained_archive_name_sha1 = C.FAST_TEXT_ARCHIVE_SHA1
    pretrained_file_name_sha1 = C.FAST_TEXT_FILE_SHA1

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name: str) -> str:
        return pretrained_file_name.rsplit(".", 1)[0] + ".zip"

    def __init__(self, pretrained_file_name: str = "wiki.simple.vec", embedding_root: str = _DEFAULT_ROOT,
                 init_unknown_vec: Callable[..., Any] = nd.zeros, vocabulary: Vocabulary | None = None,
                 **kwargs: Any) -> None:
        super().__init__(pretrained_file_name, embedding_root, init_unknown_vec, vocabulary, **kwargs)


class CustomEmbedding(_TokenEmbedding):
    """Vectors from a user's file of lines ``token<elem_delim>v1<elem_delim>...vk``.

    Parameters
    ----------
    pretrained_file_path : str
        The file.
    elem_delim : str
        Separator of the token and the values on a line.
    encoding : str
        The file's encoding.
    init_unknown_vec, vocabulary
        As for ``GloVe``; further keyword arguments (``unknown_token``,
        ``reserved_tokens``) go to ``Vocabulary``.
    """

    def __init__(self, pretrained_file_path: str, elem_delim: str = " ", encoding: str = "utf8",
                 init_unknown_vec: Callable[..., Any] = nd.zeros, vocabulary: Vocabulary | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of ``vocabulary``, each with the vectors of ``token_embeddings`` (one
    embedding or a list) joined end to end.

    Parameters
    ----------
    vocabulary : Vocabulary
        The tokens to index.
    token_embeddings : _TokenEmbedding or list of _TokenEmbedding
        Where the vectors come from, in order; a token unknown to one of them gets that
        embedding's unknown vector in its part.
    """

    def __init__(self, vocabulary: Vocabulary, token_embeddings: Any) -> None:
        assert isinstance(vocabulary, Vocabulary), \
            "The argument `vocabulary` must be an instance of mxnet.contrib.text.indexer.Vocabulary."
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        assert all(isinstance(e, _TokenEmbedding) for e in token_embeddings), \
            "The argument `token_embeddings` must be an instance or a list of instances of " \
            "`mxnet.contrib.text.embedding.TextEmbedding` whose embedding vectors will be loaded or " \
            "concatenated-then-loaded to map to the indexed tokens."
        # no Vocabulary.__init__: every table comes from `vocabulary`
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self.idx_to_token)
