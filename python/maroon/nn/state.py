"""tinygrad's nn.state helpers."""


def get_parameters(obj):
    """Every trainable Tensor of a layer, a list/tuple of layers, or an object holding layers."""
    if hasattr(obj, "parameters") and callable(obj.parameters):
        return list(obj.parameters())
    if isinstance(obj, (list, tuple)):
        return [p for o in obj for p in get_parameters(o)]
    if hasattr(obj, "__dict__"):
        return [p for v in vars(obj).values() for p in get_parameters(v)]
    return []
