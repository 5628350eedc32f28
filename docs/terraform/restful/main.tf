# llmgw models and deployments with the magodo/restful provider, pinned to 0.25.2.
#
#   export TF_VAR_llmgw_admin_token=llmgw_adm_…
#   terraform init && terraform apply
#
# What the provider sends for each step (create, refresh, update, import, destroy) is replayed against the real API by
# test/e2e/terraform.test.ts. Behaviour read from magodo/terraform-provider-restful at tag v0.25.2 (commit
# a58546ddd1b7a1269162918128e205058b3552e4): internal/provider/resource.go, internal/provider/provider.go,
# internal/client/client.go; the read-side projection is dynamic.FromJSON in magodo/terraform-plugin-framework-helper
# (commit 7a00fd96c4c995edb611c9979f3586095dedf04d, dynamic/dynamic.go).

terraform {
  required_version = ">= 1.5"
  required_providers {
    restful = {
      source  = "magodo/restful"
      version = "0.25.2"
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

provider "restful" {
  base_url = var.llmgw_url
  security = {
    http = {
      token = {
        token = var.llmgw_admin_token # sent as `Authorization: Bearer …` (scheme defaults to Bearer)
      }
    }
  }

  # llmgw creates by PUT to the object's own URL (the default is POST to `path`). Set here rather than on each
  # resource: an import cannot know resource-level settings, so each one would show as a diff after an import.
  create_method = "PUT"

  # Left at their defaults: update_method PUT (the whole body; llmgw has no PATCH), delete_method DELETE.
}

locals {
  model_name = "llama-8b"
}

resource "restful_resource" "model" {
  # With a PUT create, `path` is the object's own URL and becomes the resource id; reads, updates and deletes go to
  # the id, so read_path, update_path and delete_path are not needed.
  path = "/api/v1/models/${local.model_name}"

  # PUT creates or replaces, so a create would silently take over an object someone else declared. With this the
  # provider first GETs `path` and refuses to create unless the answer is 404 (import the object instead).
  check_existance = true

  # Sent as the PUT body. On refresh the provider keeps, from the GET response, only the keys this body has
  # (recursively, within objects and same-length lists), so `name`, `status` and `metadata` need no ignoring, and
  # neither write_only_attrs nor output_attrs is needed. The other side of that: an optional field another client
  # adds to a spec (say `tp` on a profile) is not seen; write out every field you want kept (llmgw refuses `null`
  # for an optional field, so a null placeholder cannot be used).
  body = {
    spec = {
      weightsPath = "/models/llama-3.1-8b"
      profiles = [
        { name = "one-h100", engine = "vllm", gpuClass = "h100-80g" },
      ]
    }
  }
}

resource "restful_resource" "deployment" {
  path            = "/api/v1/deployments/chat"
  check_existance = true

  body = {
    spec = {
      model    = local.model_name
      replicas = 1
      profiles = ["one-h100"]
    }
  }

  # Profiles are checked against the model when it exists, and destroy should delete the deployment first. The model
  # is named through a local so that re-creating the model does not make this body unknown.
  depends_on = [restful_resource.model]
}

# `output` holds the last GET response (restful_resource.deployment.output.status says why replicas are pending); it is
# computed, so its changes are not a diff of the resource. It is not exported as a root output here: status moves on
# its own, and an output built on it would make every plan show "Changes to Outputs".

# Import an object made elsewhere. The id is JSON: give `body` with the keys to manage set to null, or the whole
# response (status and metadata included) becomes the body and the next plan rewrites it.
#
#   terraform import restful_resource.model \
#     '{"id": "/api/v1/models/llama-8b", "path": "/api/v1/models/llama-8b", "body": {"spec": null}}'
#
# The first plan after it shows only `check_existance = true` (an import cannot know it); applying that sends no PUT,
# since the body is unchanged.
