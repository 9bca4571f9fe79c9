// A shared library target needs one source of its own; the code of libmaroon.so and
// libmaroon_lagoon.so is the static archives, linked whole (cmake/package.cmake).
