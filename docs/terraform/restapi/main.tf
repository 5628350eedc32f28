# llmgw models and deployments with the Mastercard/restapi provider, pinned to 2.0.1.
#
#   export TF_VAR_llmgw_admin_token=llmgw_adm_…
#   terraform init && terraform apply
#
# What the provider sends for each step (create, refresh, update, import, destroy) is replayed against the real API by
# test/e2e/terraform.test.ts. Behaviour read from Mastercard/terraform-provider-restapi at tag v2.0.1 (commit
# da64092737df0f13b2277938f364b712d2b9012c): restapi/resource_api_object.go, restapi/api_object.go,
# restapi/delta_checker.go, restapi/api_client.go.

terraform {
  required_version = ">= 1.5"
  required_providers {
    restapi = {
      source  = "Mastercard/restapi"
      version = "2.0.1"
    }
  }
}

variable "llmgw_url" {
  description = "Where `llmgw serve` listens, without a trailing path."
  type        = string
  default     = "http://127.0.0.1:8080"
}

variable "llmgw_admin_token" {
  description = "An admin token (llmgw_adm_…): printed at first start, or made with POST /api/v1/tokens."
  type        = string
  sensitive   = true
}

provider "restapi" {
  uri = var.llmgw_url
  headers = {
    Authorization = "Bearer ${var.llmgw_admin_token}"
  }

  # The object's id is its `name`. The provider takes it from `data` before creating (so `data` must carry `name`),
  # puts it in place of `{id}` in create_path, and uses `path/{id}` to read, update and delete.
  id_attribute = "name"

  # llmgw creates by PUT to the object's own URL; the default POST to `path` would be 405.
  create_method = "PUT"

  # Left at their defaults: update_method PUT, destroy_method DELETE, write_returns_object false (the provider GETs
  # the object after every PUT instead of parsing the PUT's reply, which would work too).
}

locals {
  model_name = "llama-8b"
}

resource "restapi_object" "model" {
  # path/{id} (/api/v1/models/llama-8b) is where the object is read, replaced and deleted.
  path = "/api/v1/models"
  # Without create_path the create PUT would go to `path` itself (/api/v1/models), which has no PUT.
  create_path = "/api/v1/models/{id}"

  # On every refresh the provider compares each key of `data` with the GET response, recursively, AND reports any key
  # the response has that `data` lacks. llmgw answers {name, spec, status, metadata}: `name` and `spec` are in `data`
  # (spec reads back exactly as written, so it compares equal); status and metadata are server state and must be
  # ignored, or every plan would show a diff. Keep ignore_all_server_changes at its default (false), or changes made
  # by other clients would never be put back.
  ignore_changes_to = ["status", "metadata"]

  # Sent as the PUT body as is (re-serialized with sorted keys). `name` is required here: it is where the provider
  # learns the id. Write only fields you mean to manage: a spec field the server has but `data` lacks is a diff.
  data = jsonencode({
    name = local.model_name
    spec = {
      weightsPath = "/models/llama-3.1-8b"
      profiles = [
        { name = "one-h100", engine = "vllm", gpuClass = "h100-80g" },
      ]
    }
  })
}

resource "restapi_object" "deployment" {
  path              = "/api/v1/deployments"
  create_path       = "/api/v1/deployments/{id}"
  ignore_changes_to = ["status", "metadata"]

  data = jsonencode({
    name = "chat"
    spec = {
      model    = local.model_name
      replicas = 1
      profiles = ["one-h100"]
    }
  })

  # llmgw accepts a deployment before its model (it stays pending), but a deployment that names profiles is checked
  # against its model when the model exists; ordering also makes destroy delete the deployment first. The model is
  # named through a local, not through restapi_object.model.id: an id that is unknown while the model is being
  # re-created would make this resource's `data` unknown and plan a needless update.
  depends_on = [restapi_object.model]
}

# `api_response` holds the last GET response (e.g. jsondecode(restapi_object.deployment.api_response).status says why
# replicas are pending). It is not exported as a root output here: status moves on its own, and an output built on it
# would make every plan show "Changes to Outputs".

# Import an object made elsewhere: the id is the full path of the object.
#
#   terraform import restapi_object.model /api/v1/models/llama-8b
#
# The first plan after an import shows an in-place update of `data` (and of create_path and ignore_changes_to, which
# an import cannot know): the imported `data` is the whole GET response plus `"id": null`. Applying it PUTs the same
# spec, which llmgw answers 200 without changing the version; the plans after that are clean.
