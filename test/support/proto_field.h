// For the tests that check hand-kept field numbers against protoc's descriptors.
#pragma once

#include <google/protobuf/descriptor.h>

#include <string>

#include "support/catch.hpp"

namespace gpuprobe::testing {

// The number of `message`'s field `name`; fails the test if the schema has no such field.
inline int proto_field(const google::protobuf::Descriptor* message, const std::string& name) {
  const google::protobuf::FieldDescriptor* f = message->FindFieldByName(name);
  INFO(message->full_name() << "." << name);
  REQUIRE(f != nullptr);
  return f->number();
}

}  // namespace gpuprobe::testing
