"""``mx.contrib.amp``: automatic mixed precision (float16 training with dynamic loss
scaling, and float16 graph conversion for inference), as MXNet 1.9.1's."""
from . import lists
from .amp import (convert_bucketing_module, convert_hybrid_block, convert_model, convert_symbol, init, init_trainer,
                  list_conditional_fp32_ops,
                  list_fp32_ops, list_loss_output_functions, list_lp16_fp32_ops, list_lp16_ops,
                  list_lp16_use_fp32_params, list_widest_type_cast, scale_loss, unscale)
from .loss_scaler import LossScaler

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model", "convert_hybrid_block",
           "convert_bucketing_module", "convert_symbol", "list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops",
           "list_conditional_fp32_ops",
           "list_widest_type_cast", "list_loss_output_functions", "list_lp16_use_fp32_params", "LossScaler",
           "lists"]
