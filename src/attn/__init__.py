"""attn: scaled dot-product attention in the notation of Chapter II.3.

Row convention: Q is (T_q, d_k), K is (T_k, d_k), V is (T_k, d_v).
Plotting and widget code lives in submodules that import matplotlib and
ipywidgets themselves, so ``import attn`` pulls in NumPy only.
"""
from .attention import Attention, attention, scores
from .blocked import BlockedAttention, blocked_attention
from .cost import FlopCount, count_attention_flops, score_flops, score_matrix_bytes
from .derivatives import attention_grad_query, entropy_tau_derivative, softmax_jacobian, softmax_jacobian_norm
from .examples import random_logits
from .masks import causal_mask
from .measures import cosine_similarity, entropy
from .positional import sinusoidal_encoding
from .multihead import MultiHeadAttention, merge_heads, multi_head_attention, split_heads
from .softmax import log_softmax, logsumexp, softmax
from .wiring import attention_block, cross_attention, project, self_attention

__all__ = [
    "Attention",
    "attention",
    "attention_block",
    "attention_grad_query",
    "BlockedAttention",
    "blocked_attention",
    "causal_mask",
    "cosine_similarity",
    "count_attention_flops",
    "cross_attention",
    "entropy",
    "entropy_tau_derivative",
    "FlopCount",
    "log_softmax",
    "logsumexp",
    "merge_heads",
    "multi_head_attention",
    "MultiHeadAttention",
    "project",
    "random_logits",
    "score_flops",
    "score_matrix_bytes",
    "scores",
    "sinusoidal_encoding",
    "self_attention",
    "softmax",
    "softmax_jacobian",
    "softmax_jacobian_norm",
    "split_heads",
]
__version__ = "0.1.0"
