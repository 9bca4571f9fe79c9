// Threefry and every random function and initialiser, in the order a program calls them: each
// call's result depends on the seed and on how many words the calls before it took.
#include <functional>

#include "vectors.h"

namespace maroon::vectors {

namespace {

const std::string kFile = "random.safetensors";

struct Call {
  std::string name, args;
  std::function<Tensor()> fn;
};

// After manual_seed(seed), each call in order; a vector per call (args name the seed and the
// call's position in the sequence, which a replay must follow).
void sequence(Book& book, uint64_t seed) {
  std::vector<Call> calls = {
      {"rand", "\"shape\": [5], \"dtype\": \"float32\"", [] { return Tensor::rand({5}); }},
      {"rand", "\"shape\": [3, 2], \"dtype\": \"float32\"", [] { return Tensor::rand({3, 2}); }},
      {"rand", "\"shape\": [3], \"dtype\": \"float16\"", [] { return Tensor::rand({3}, DType::Float16); }},
      {"rand", "\"shape\": [3], \"dtype\": \"bfloat16\"", [] { return Tensor::rand({3}, DType::BFloat16); }},
      {"rand", "\"shape\": [3], \"dtype\": \"float64\"", [] { return Tensor::rand({3}, DType::Float64); }},
      {"randn", "\"shape\": [4], \"dtype\": \"float32\"", [] { return Tensor::randn({4}); }},
      {"uniform", "\"shape\": [4], \"low\": -2, \"high\": 3", [] { return Tensor::uniform({4}, -2, 3); }},
      {"randint", "\"shape\": [6], \"low\": 0, \"high\": 10", [] { return Tensor::randint({6}, 0, 10); }},
      {"normal", "\"shape\": [4], \"mean\": 1, \"std\": 2", [] { return Tensor::normal({4}, 1, 2); }},
      {"scaled_uniform", "\"shape\": [2, 3]", [] { return Tensor::scaled_uniform({2, 3}); }},
      {"glorot_uniform", "\"shape\": [2, 3]", [] { return Tensor::glorot_uniform({2, 3}); }},
      {"kaiming_uniform", "\"shape\": [3, 4], \"a\": 0.01", [] { return Tensor::kaiming_uniform({3, 4}); }},
      {"kaiming_normal", "\"shape\": [3, 4], \"a\": 0.01", [] { return Tensor::kaiming_normal({3, 4}); }},
      {"randperm", "\"n\": 8", [] { return Tensor::randperm(8); }},
      {"dropout", "\"p\": 0.5, \"x\": \"ones(8)\", \"training\": true",
       [] {
         TrainingScope training;
         return Tensor::ones({8}).dropout(0.5);
       }},
      {"multinomial", "\"weights\": [1, 2, 3, 4, 0], \"num_samples\": 3, \"replacement\": true",
       [] { return Tensor::from_vector<float>({1, 2, 3, 4, 0}, {5}).multinomial(3, true); }},
      {"nn.Linear(4, 3).weight", "\"in\": 4, \"out\": 3", [] { return nn::Linear(4, 3).weight; }},
      {"nn.Conv2d(2, 3, 3).weight", "\"in\": 2, \"out\": 3, \"kernel\": 3",
       [] { return nn::Conv2d(2, 3, {3}).weight; }},
  };
  Tensor::manual_seed(seed);
  for (size_t k = 0; k < calls.size(); ++k) {
    const Call& c = calls[k];
    std::string args = "{\"seed\": " + std::to_string(seed) + ", \"call\": " + std::to_string(k) + ", " + c.args + "}";
    book.add({"random/seed" + std::to_string(seed) + "/" + std::to_string(k) + "/" + c.name, c.name, "", "nearest",
              args, {}, {book.output(kFile, c.fn())}});
  }
}

}  // namespace

void add_random(Book& book) {
  // The THREEFRY primitive: x and key are uint64, each (high word << 32) | low word.
  std::vector<uint64_t> x = {0, 1, 0xffffffffull, 0x100000000ull, 0x123456789abcdef0ull, ~uint64_t{0}};
  std::vector<uint64_t> key = {0, 0x14b81119ull, 0x0000000114b81119ull, 0xdeadbeefcafef00dull, 7, ~uint64_t{0}};
  Tensor tx = Tensor::from_vector(x, {6}), tk = Tensor::from_vector(key, {6});
  book.add({"THREEFRY/uint64", "THREEFRY", "uint64", "nearest", "{}",
            {book.input(kFile, "threefry/x", tx), book.input(kFile, "threefry/key", tk)},
            {book.output(kFile, tx.threefry(tk))}});
  // random_bits: 9 words under key (k0, k1) from counter (c_lo, c_hi).
  Tensor k = Tensor::from_vector<uint32_t>({0x14b81119u, 1337}, {2}), c = Tensor::from_vector<uint32_t>({5, 0}, {2});
  book.add({"random_bits", "random_bits", "uint32", "nearest", "{\"num\": 9}",
            {book.input(kFile, "random_bits/key", k), book.input(kFile, "random_bits/counter", c)},
            {book.output(kFile, Tensor::random_bits(k, c, 9))}});
  for (uint64_t seed : {uint64_t{0}, uint64_t{1337}}) sequence(book, seed);
}

}  // namespace maroon::vectors
