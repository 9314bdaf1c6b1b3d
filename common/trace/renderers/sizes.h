// Sizes in bytes as the chapters and `ladder-trace diff` print memory, for `ladder-trace memory`: decimal units (1 kB =
// 1000 bytes, 1 MB = 10^6, 1 GB = 10^9), so that its figures read as the chapter that quotes them. torch's own
// table (summary) keeps torch's 1024-based "MB": it is torch's table, cell for cell.
#pragma once

#include <string>

namespace ladder {

// "110.68 MB", "-2.10 MB", "1.20 GB", "4.10 kB", "512 B".
std::string size_text(double bytes);

}  // namespace ladder
