# Licensed to the Apache Software Foundation (ASF) under one
# or more contributor license agreements.  See the NOTICE file
# distributed with this work for additional information
# regarding copyright ownership.  The ASF licenses this file
# to you under the Apache License, Version 2.0 (the
# "License"); you may not use this file except in compliance
# with the License.  You may obtain a copy of the License at
#
#   http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing,
# software distributed under the License is distributed on an
# "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
# KIND, either express or implied.  See the License for the
# specific language governing permissions and limitations
# under the License.
# Ported from Apache MXNet 1.9.1 (mxnet/contrib/text/__init__.py) for plexnet.

"""``contrib.text``: vocabulary, token indexing and token embeddings (MXNet 1.9.1's
``mxnet.contrib.text``). Pre-trained embeddings (GloVe, fastText) download their files
(``$MXNET_HOME/embeddings``); ``CustomEmbedding`` and ``CompositeEmbedding`` work offline."""
from . import embedding, utils, vocab

__all__ = ["utils", "vocab", "embedding"]
