// Names of enumerators as tables indexed by the enumerator's value, in place of one switch per
// enum. A switch lets the compiler flag an enumerator without a name; a table keeps that check
// with a static_assert of lists_every(table, count), where count is the enumerator count the enum
// declares beside itself: the table must list each enumerator once, in declaration order.
#pragma once

#include <cstddef>

namespace ndconv {

template <typename Enum>
struct EnumName {
  Enum value;
  const char* name;
};

/// True when `table` holds exactly `count` entries and entry i names the enumerator of value i.
template <typename Enum, std::size_t N>
constexpr bool lists_every(const EnumName<Enum> (&table)[N], std::size_t count) {
  if (N != count)
    return false;
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(table[i].value) != i)
      return false;
  }
  return true;
}

/// The name of `value` in `table`, or `unknown` for a value outside the enum.
template <typename Enum, std::size_t N>
constexpr const char* name_of(Enum value, const EnumName<Enum> (&table)[N], const char* unknown) {
  const auto i = static_cast<std::size_t>(value);
  return i < N ? table[i].name : unknown;
}

}  // namespace ndconv
