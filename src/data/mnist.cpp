// MNIST-format datasets from IDX files, with the shape and label checks a training run needs.
#include <string>

#include "maroon/datasets.h"
#include "maroon/idx.h"

namespace maroon::data {

Split load_split(const std::string& images_path, const std::string& labels_path) {
  IdxArray im = load_idx(images_path), lb = load_idx(labels_path);
  if (im.dtype != DType::UInt8 || im.shape.size() != 3 || im.shape[1] != 28 || im.shape[2] != 28)
    throw FormatError("[mnist] '" + images_path + "': expected uint8 images of shape (n,28,28), got " +
                      std::string(dtype_name(im.dtype)) + " " + shape_str(im.shape));
  if (lb.dtype != DType::UInt8 || lb.shape.size() != 1)
    throw FormatError("[mnist] '" + labels_path + "': expected uint8 labels of shape (n,), got " +
                      std::string(dtype_name(lb.dtype)) + " " + shape_str(lb.shape));
  if (lb.shape[0] != im.shape[0])
    throw FormatError("[mnist] " + std::to_string(im.shape[0]) + " images in '" + images_path + "' but " +
                      std::to_string(lb.shape[0]) + " labels in '" + labels_path + "'");
  for (size_t i = 0; i < lb.bytes.size(); ++i)
    if (lb.bytes[i] > 9)
      throw FormatError("[mnist] '" + labels_path + "': label " + std::to_string(lb.bytes[i]) + " at index " +
                        std::to_string(i) + " is not a digit class 0..9");
  return Split{im.shape[0], std::move(im.bytes), std::move(lb.bytes)};
}

Mnist load_mnist(const std::string& dir) {
  return Mnist{load_split(dir + "/train-images-idx3-ubyte", dir + "/train-labels-idx1-ubyte"),
               load_split(dir + "/t10k-images-idx3-ubyte", dir + "/t10k-labels-idx1-ubyte")};
}

}  // namespace maroon::data
