// Utility stub: replaced by the real implementation.
#include "common/error.h"
extern "C" {
CATTN_API cattn_status_t cattn_get_per_layer_parameters(const cattn_attention_layer_desc_t*, size_t, cattn_per_layer_parameters_t*) { return CATTN_NOT_IMPLEMENTED; }
CATTN_API cattn_status_t cattn_infer_global_hyperparameters(const cattn_per_layer_parameters_t*, size_t, cattn_global_hyperparameters_t*) { return CATTN_NOT_IMPLEMENTED; }
}
