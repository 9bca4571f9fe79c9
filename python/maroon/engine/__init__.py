"""tinygrad.engine's module path (`from tinygrad.engine.jit import TinyJit`), so programs that
import TinyJit from there run with only the import changed."""
