// SPDX-License-Identifier: Apache-2.0
// One value per type, of types the holder does not know: how shared code
// keeps each probe kind's own settings (its config section in Config, its run
// settings in ProbeSettings) without naming the kinds, whose modules define
// the types (probing/kinds/). A value semantic holder: copies are deep.
#pragma once

#include <any>
#include <concepts>
#include <map>
#include <typeindex>

namespace numaprobe::daemon {

class TypedValues {
 public:
  // The value of type T, default-constructed on first use.
  template <class T>
  T& Of() {
    auto it = values_.find(typeid(T));
    if (it == values_.end()) it = values_.emplace(typeid(T), Slot{T{}, &Equal<T>}).first;
    return std::any_cast<T&>(it->second.value);
  }
  // A type never set reads as its default, so an empty holder means "every
  // default" (Config{} equals the parse of an empty file).
  template <class T>
  const T& Of() const {
    const auto it = values_.find(typeid(T));
    if (it == values_.end()) {
      static const T kDefault{};
      return kDefault;
    }
    return *std::any_cast<T>(&it->second.value);
  }

  // Equal when every type holds equal values, an absent one counting as its
  // default. Values of types without == never compare equal.
  bool operator==(const TypedValues& other) const {
    for (const auto& [type, slot] : values_) {
      const auto it = other.values_.find(type);
      if (!slot.equal(slot.value, it == other.values_.end() ? nullptr : &it->second.value)) return false;
    }
    for (const auto& [type, slot] : other.values_) {
      if (!values_.contains(type) && !slot.equal(slot.value, nullptr)) return false;
    }
    return true;
  }

 private:
  struct Slot {
    std::any value;
    bool (*equal)(const std::any& value, const std::any* other);  // other null: T's default
  };
  template <class T>
  static bool Equal(const std::any& value, const std::any* other) {
    if constexpr (std::equality_comparable<T>) {
      return std::any_cast<const T&>(value) == (other == nullptr ? T{} : std::any_cast<const T&>(*other));
    } else {
      return false;
    }
  }

  std::map<std::type_index, Slot> values_;
};

}  // namespace numaprobe::daemon
