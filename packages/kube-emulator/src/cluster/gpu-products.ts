/**
 * How each GPU model of the catalog (@gantry/contracts) shows itself outside Gantry: the product
 * name GPU feature discovery labels (`nvidia.com/gpu.product`, parsed back by the driver's
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
  'H200-141GB': { product: 'NVIDIA-H200', nvmlName: 'NVIDIA H200', passthroughResource: 'nvidia.com/GH100_H200_SXM5_141GB' },
  'A100-80GB': { product: 'NVIDIA-A100-SXM4-80GB', nvmlName: 'NVIDIA A100-SXM4-80GB', passthroughResource: 'nvidia.com/GA100_A100_SXM4_80GB' },
  'A100-40GB': { product: 'NVIDIA-A100-SXM4-40GB', nvmlName: 'NVIDIA A100-SXM4-40GB', passthroughResource: 'nvidia.com/GA100_A100_SXM4_40GB' },
};

export function gpuProductNames(model: string): GpuProductNames {
  const known = PRODUCTS[model];
  if (known) return known;
  const slug = model.replace(/[^A-Za-z0-9._-]+/g, '-');
  return { product: slug, nvmlName: model, passthroughResource: `nvidia.com/${slug.replace(/[.-]/g, '_').toUpperCase()}` };
}
