"""plexnet-ops-quantization: MXNet 1.9.1's int8/uint8 quantization operators
(``nd.contrib.quantize*``, ``quantized_*``, ``requantize``, ``dequantize``,
``calibrate_entropy``), device-generic through ``xp``."""
__version__ = "0.1.0"
