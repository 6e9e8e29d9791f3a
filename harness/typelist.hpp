// typelist.hpp — a compile-time list of workload types.
#pragma once

namespace coopbench {

template <class... Ts>
struct TypeList {};

template <class... Ls>
struct Concat;
template <>
struct Concat<> {
    using type = TypeList<>;
};
template <class... As>
struct Concat<TypeList<As...>> {
    using type = TypeList<As...>;
};
template <class... As, class... Bs, class... Rest>
struct Concat<TypeList<As...>, TypeList<Bs...>, Rest...> {
    using type = typename Concat<TypeList<As..., Bs...>, Rest...>::type;
};

}  // namespace coopbench
