// What changed from one trace to another, for the terminal: ladder-trace diff.
#pragma once

#include <functional>
#include <string>

#include "trace/model/trace.h"
#include "trace/renderers/output_table.h"

namespace ladder {

// What changed from trace `a` to trace `b`, per step: GPU work removed (-, "gone") and added (+, "new") by name, with
// its time, and work in both (=) with its time before and after; kernels, copies (memcpy) and sets (memset) alike,
// since all three count in GPU busy time. Then the step's counts, GPU busy and wall time before and after, and the
// bytes its kernels moved where they can be derived from the launching ops' recorded shapes (op_work,
// trace/analyses/work.h); where they cannot, the line says which trace lacks what.
// A row names the op that launched its work in brackets when that op is a torch operator ("aten::mm",
// "ladder::gelu_mul": a namespace::name); a compiled trace's Inductor wrappers (the Triton kernel's own name, "## Call
// CompiledFxGraph ##") are not, so its rows show the kernel alone. An = row whose ops differ names both: [A | B].
// Means over all steps, or the one step named `step` in both (see find_step: an unknown step throws TraceError). A
// trace without ProfilerStep is one window over the whole trace, and the output says so.
// OutputFormat::Csv / Json: the same as records for pandas or a CI check, one per row and one per step figure, with the
// columns step ("ProfilerStep#3", or "mean" over all steps), kind (kernel, memcpy, memset, or step for a figure),
// change (gone, new, both; "" for a figure), name, op_a, op_b, count_a, count_b (per step), a, b (per step, in unit),
// unit (us, count, bytes), bytes_a, bytes_b (derived bytes per step, null where unknown) and note (why bytes are not
// derivable, or that a trace is one window). A side without the row or the figure is null.
// name_width: the columns of a text row's label (at least 20); labels longer are cut, no two different rows alike.
std::string diff_traces(const Trace& a, const Trace& b, const std::string& name_a = "a",
                        const std::string& name_b = "b", const std::string& step = "",
                        OutputFormat format = OutputFormat::Text, int name_width = 60);
// The same, reading each trace only when its figures are taken and dropping it before the next is read: two large
// traces are never in memory together (two 1 GB traces: 1.48 GB at the peak when held together).
std::string diff_traces(const std::function<Trace()>& load_a, const std::function<Trace()>& load_b,
                        const std::string& name_a, const std::string& name_b, const std::string& step = "",
                        OutputFormat format = OutputFormat::Text, int name_width = 60);

}  // namespace ladder
