// Utility stub: replaced by the real implementation.
#include "common/error.h"
extern "C" {
CATTN_API cattn_status_t cattn_fused_pcp_qkv_select(const cattn_fused_pcp_qkv_select_args_t*) { return CATTN_NOT_IMPLEMENTED; }
}
