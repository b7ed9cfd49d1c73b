// Utility stub: replaced by the real implementation.
#include "common/error.h"
extern "C" {
CATTN_API cattn_status_t cattn_compute_causal_conv1d_metadata_size(const DLTensor*, int64_t, int64_t*, int64_t*) { return CATTN_NOT_IMPLEMENTED; }
CATTN_API cattn_status_t cattn_compute_causal_conv1d_metadata(cattn_causal_conv1d_metadata_args_t*) { return CATTN_NOT_IMPLEMENTED; }
}
