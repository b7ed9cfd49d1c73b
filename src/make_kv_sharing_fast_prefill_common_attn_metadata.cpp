// Utility stub: replaced by the real implementation.
#include "common/error.h"
extern "C" {
CATTN_API cattn_status_t cattn_make_kv_sharing_fast_prefill_common_attn_metadata(cattn_fast_prefill_metadata_args_t*) { return CATTN_NOT_IMPLEMENTED; }
}
