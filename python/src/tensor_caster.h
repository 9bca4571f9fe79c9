// pybind11's caster for maroon::Tensor, with the class's registration record looked up once.
// A Tensor crosses the binding several times per operator (self, the other operand, the
// result); the generic caster finds the class by hashing the C++ type's name every time
// (strlen, _Hash_bytes and two maps: module-local types, then global ones), ~3% of a small op
// from Python. The record never changes once class_<Tensor> is registered, so it is kept.
// Everything else is type_caster_base's code (pybind11 2.10), unchanged.
// Included by bind.h ahead of any use: the specialization must be seen before the first one.
#pragma once
#include <pybind11/pybind11.h>

#include "maroon/tensor.h"

namespace pybind11::detail {

// Null until class_<Tensor> is registered (then looked up again next time).
inline const type_info* maroon_tensor_info() {
  static const type_info* info = nullptr;  // written under the GIL
  if (!info) info = get_type_info(typeid(maroon::Tensor));
  return info;
}

template <>
class type_caster<maroon::Tensor> : public type_caster_generic {
  using itype = maroon::Tensor;
  // type_caster_base's copy and move constructors for the result, made reachable here.
  struct Ctors : type_caster_base<maroon::Tensor> {
    using type_caster_base<maroon::Tensor>::make_copy_constructor;
    using type_caster_base<maroon::Tensor>::make_move_constructor;
  };

 public:
  static constexpr auto name = const_name<itype>();

  type_caster() : type_caster_generic(maroon_tensor_info()) { cpptype = &typeid(itype); }

  static handle cast(const itype& src, return_value_policy policy, handle parent) {
    if (policy == return_value_policy::automatic || policy == return_value_policy::automatic_reference)
      policy = return_value_policy::copy;
    return cast(&src, policy, parent);
  }
  static handle cast(itype&& src, return_value_policy, handle parent) {
    return cast(&src, return_value_policy::move, parent);
  }
  // Tensor has no virtual members: no derived class to look for (type_caster_base's
  // src_and_type ends in the same lookup for it).
  static handle cast(const itype* src, return_value_policy policy, handle parent) {
    return type_caster_generic::cast(src, policy, parent, info_or_lookup(), Ctors::make_copy_constructor(src),
                                     Ctors::make_move_constructor(src));
  }
  static handle cast_holder(const itype* src, const void* holder) {
    return type_caster_generic::cast(src, return_value_policy::take_ownership, {}, info_or_lookup(), nullptr,
                                     nullptr, holder);
  }

  template <typename T>
  using cast_op_type = detail::cast_op_type<T>;
  // NOLINTNEXTLINE(google-explicit-constructor)
  operator itype*() { return static_cast<itype*>(value); }
  // NOLINTNEXTLINE(google-explicit-constructor)
  operator itype&() {
    if (!value) throw reference_cast_error();
    return *static_cast<itype*>(value);
  }

 private:
  // Before registration (never in practice) the generic path, which raises pybind11's usual
  // "unregistered type" error.
  static const type_info* info_or_lookup() {
    if (const type_info* t = maroon_tensor_info()) return t;
    return type_caster_generic::src_and_type(nullptr, typeid(itype)).second;
  }
};

static_assert(!std::is_polymorphic<maroon::Tensor>::value, "a derived Tensor would need type_caster_base's lookup");

}  // namespace pybind11::detail
