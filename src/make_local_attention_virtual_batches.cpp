// Utility stub: replaced by the real implementation.
#include "common/error.h"
extern "C" {
CATTN_API cattn_status_t cattn_make_local_attention_virtual_batches(cattn_local_attention_args_t*) { return CATTN_NOT_IMPLEMENTED; }
CATTN_API cattn_status_t cattn_local_attention_plan_get_shape(const cattn_local_attention_plan_t*, int64_t*, int64_t*) { return CATTN_NOT_IMPLEMENTED; }
CATTN_API cattn_status_t cattn_local_attention_plan_fill(const cattn_local_attention_plan_t*, const cattn_local_attention_fill_args_t*) { return CATTN_NOT_IMPLEMENTED; }
CATTN_API cattn_status_t cattn_local_attention_plan_make_block_table(const cattn_local_attention_plan_t*, const DLTensor*, DLTensor*, cattn_stream_t) { return CATTN_NOT_IMPLEMENTED; }
}
extern "C" CATTN_API void cattn_local_attention_plan_destroy(cattn_local_attention_plan_t*) {}
