/**
 * How each GPU model of the catalog (@gantry/contracts) shows itself outside Gantry: the product
 * name GPU feature discovery (or the AMD node labeller) labels (`nvidia.com/gpu.product`,
 * `amd.com/gpu.product-name`, parsed back by the driver's
 * gpuModelFromProduct), the `modelName` dcgm-exporter prints (NVML's name), and the resource
 * the KubeVirt GPU device plugin advertises in the vm-passthrough persona. A model outside the
 * catalog shows its own name.
 */
export interface GpuProductNames {
  product: string;
  nvmlName: string;
  passthroughResource: string;
}

const PRODUCTS: Record<string, GpuProductNames> = {
  'H100-80GB': { product: 'NVIDIA-H100-80GB-HBM3', nvmlName: 'NVIDIA H100 80GB HBM3', passthroughResource: 'nvidia.com/GH100_H100_SXM5_80GB' },
  'B200-180GB': { product: 'NVIDIA-B200', nvmlName: 'NVIDIA B200', passthroughResource: 'nvidia.com/GB100_B200_SXM6_180GB' },
  'H200-141GB': { product: 'NVIDIA-H200', nvmlName: 'NVIDIA H200', passthroughResource: 'nvidia.com/GH100_H200_SXM5_141GB' },
  'A100-80GB': { product: 'NVIDIA-A100-SXM4-80GB', nvmlName: 'NVIDIA A100-SXM4-80GB', passthroughResource: 'nvidia.com/GA100_A100_SXM4_80GB' },
  'A100-40GB': { product: 'NVIDIA-A100-SXM4-40GB', nvmlName: 'NVIDIA A100-SXM4-40GB', passthroughResource: 'nvidia.com/GA100_A100_SXM4_40GB' },
  // the AMD node labeller's amd.com/gpu.product-name; passthrough: the operator's VF/PF device resource
  'MI300X-192GB': { product: 'AMD_Instinct_MI300X_OAM', nvmlName: 'AMD Instinct MI300X OAM', passthroughResource: 'amd.com/gpu' },
};

export function gpuProductNames(model: string): GpuProductNames {
  const known = PRODUCTS[model];
  if (known) return known;
  const slug = model.replace(/[^A-Za-z0-9._-]+/g, '-');
  return { product: slug, nvmlName: model, passthroughResource: `nvidia.com/${slug.replace(/[.-]/g, '_').toUpperCase()}` };
}
